import type { Context } from "hono";
import { inlineScript } from "#shared/http/security-headers";
import { buildLocalWebhook, localConfirmationFields, readLocalRef, sendLocalWebhook, type LocalOutcome } from "#shared/payments/local-protocol";
import { formatMoney } from "#shared/storefront/catalog";
import { notFoundPage } from "./catalog-pages";
import { ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

/**
 * The local gateway's hosted payment page (development and tests only; docs/payments.md): what a real
 * gateway's page is to the shopper. Pay or Fail sends the gateway's signed webhook to the worker
 * (PAYMENT_WEBHOOK_ORIGIN; "twice" delivers it twice, "late" after 3 s) and brings the shopper back to
 * the store with the signed confirmation, as Razorpay's checkout does.
 */
type ShopContext = Context<ShopEnv>;

/** Submits the return form at once, as a gateway's page does (registered for the CSP). */
const SUBMIT_BACK = inlineScript(`document.getElementById("back").submit()`);

const OUTCOMES: Record<string, { outcome: LocalOutcome; deliveries: number; delayMs: number }> = {
  pay: { outcome: "captured", deliveries: 1, delayMs: 0 },
  fail: { outcome: "failed", deliveries: 1, delayMs: 0 },
  twice: { outcome: "captured", deliveries: 2, delayMs: 0 },
  late: { outcome: "captured", deliveries: 1, delayMs: 3_000 },
};

async function opened(c: ShopContext) {
  const { store, providers } = c.var.shop;
  if (providers.gatewayConfig().provider !== "local") return null;
  const sg = await providers.storeGateway(store.id);
  const ref = c.req.param("ref") ?? "";
  const read = await readLocalRef(ref, sg.webhookSecret);
  return read && read.storeId === store.id ? { sg, ref, read } : null;
}

export async function gatewayPage(c: ShopContext) {
  const o = await opened(c);
  if (!o) return notFoundPage(c);
  c.header("cache-control", "no-store");
  return c.html(
    <ShopPage head={{ storeName: "Local payment gateway", title: "Pay", description: "The local payment gateway.", noindex: true }}>
      <div class="card">
        <h1>Local payment gateway</h1>
        <p class="muted">Make-believe payments for development: no money moves.</p>
        <p>
          Order #{o.read.orderNumber}, attempt {o.read.attempt}: <strong data-amount>{formatMoney(o.read.amount, o.read.currency)}</strong>
        </p>
        <form method="post">
          <button type="submit" name="action" value="pay">
            Pay
          </button>{" "}
          <button type="submit" name="action" value="fail" class="secondary">
            Fail
          </button>{" "}
          <button type="submit" name="action" value="twice" class="secondary">
            Pay, deliver the webhook twice
          </button>{" "}
          <button type="submit" name="action" value="late" class="secondary">
            Pay, deliver the webhook late
          </button>
        </form>
      </div>
    </ShopPage>,
  );
}

export async function gatewayPagePost(c: ShopContext) {
  const o = await opened(c);
  if (!o) return notFoundPage(c);
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const choice = OUTCOMES[String(form["action"] ?? "")];
  if (!choice) return gatewayPage(c);
  const workerOrigin = c.var.shop.env.PAYMENT_WEBHOOK_ORIGIN;
  if (workerOrigin) {
    const hook = await buildLocalWebhook({ providerRef: o.ref, outcome: choice.outcome, secret: o.sg.webhookSecret, workerOrigin });
    const delivery = hook ? sendLocalWebhook(hook, { deliveries: choice.deliveries, delayMs: choice.delayMs }) : Promise.resolve([]);
    const log = c.var.shop.log;
    const sent = delivery.catch((e: unknown) => log.warn("local_gateway.webhook_failed", { error: String(e) }));
    // A late delivery must not hold the shopper; the others are sent before the shopper is sent back.
    if (choice.delayMs > 0) c.var.shop.defer(sent);
    else await sent;
  }
  const fields = (await localConfirmationFields(o.ref, choice.outcome, o.sg.confirmationSecret))!;
  c.header("cache-control", "no-store");
  return c.html(
    <ShopPage head={{ storeName: "Local payment gateway", title: "Returning to the store", description: "Returning to the store.", noindex: true }}>
      <form method="post" action={o.read.returnUrl} id="back">
        {Object.entries(fields).map(([name, value]) => (
          <input type="hidden" name={name} value={value} />
        ))}
        <p>{choice.outcome === "failed" ? "The payment failed." : "Paid."}</p>
        <button type="submit">Back to the store</button>
      </form>
      <script dangerouslySetInnerHTML={{ __html: SUBMIT_BACK }} />
    </ShopPage>,
  );
}
