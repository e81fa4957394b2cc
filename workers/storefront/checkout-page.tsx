import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { FC } from "hono/jsx";
import { isAppError } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import { checkoutInput } from "#shared/orders/checkout";
import { INDIAN_STATE_CODES, INDIAN_STATE_NAMES } from "#shared/rules/gst";
import { CURRENT_STORE } from "#shared/db/openings";
import { together } from "#shared/db/plan";
import { sendStoreUnit } from "#shared/db/unit";
import { paymentSettingsPlan } from "#shared/orders/holds";
import { cartDepositTerms, cartPreorderVariantsPlan, type DepositTerms } from "#shared/orders/preorders";
import { cartKeyOf, cartPlan } from "#shared/storefront/cart";
import { formatMoney } from "#shared/storefront/catalog";
import { CART_COOKIE } from "./cart";
import { CHALLENGE_FIELD } from "#shared/challenge/challenge";
import { ChallengeWidget } from "#shared/challenge/widget";
import { checkoutAndPay, type PayDeps } from "#shared/orders/checkout-flow";
import { checkoutWidget } from "./limits";
import { Alert, CartSummary, EmptyCart, ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

/**
 * The checkout page (an address form and the order summary, usable without JavaScript). The form posts to
 * /checkout, which places the order through the same code as `POST /api/checkout` and goes on to the
 * gateway's page or the order's link (./order-page.tsx); a mistake re-renders the form with what was
 * typed and each message by its field.
 */
type ShopContext = Context<ShopEnv>;

type Values = Record<string, string>;
type Errors = Record<string, string>;

const FIELDS: [name: string, label: string, autocomplete: string, type?: string][] = [
  ["email", "Email", "email", "email"],
  ["phone", "Mobile (optional, e.g. +919876543210)", "tel", "tel"],
  ["shippingAddress.name", "Full name", "name"],
  ["shippingAddress.line1", "Address", "address-line1"],
  ["shippingAddress.line2", "Address line 2 (optional)", "address-line2"],
  ["shippingAddress.city", "City", "address-level2"],
  ["shippingAddress.postalCode", "PIN code", "postal-code"],
];

const deps = (c: ShopContext): PayDeps => {
  const { db, log, store, providers, origin } = c.var.shop;
  return { db, log, storeId: store.id, providers, origin, ip: c.req.header("cf-connecting-ip") ?? null };
};

/** The cart, the store's payment settings and which lines are pre-orders, in one round trip. */
async function readCheckout(c: ShopContext) {
  const { store, db } = c.var.shop;
  const key = await cartKeyOf(getCookie(c, CART_COOKIE));
  const tokenHash = key && "tokenHash" in key ? key.tokenHash : null;
  return sendStoreUnit(db, store.id, (q) =>
    together({ cart: cartPlan(q, key), settings: paymentSettingsPlan(q, CURRENT_STORE), preorders: cartPreorderVariantsPlan(q, CURRENT_STORE, tokenHash) }),
  );
}

/** "72 hours" or "3 days": how long a transfer order holds its items. */
const holdWords = (hours: number) => (hours % 24 === 0 && hours >= 48 ? `${hours / 24} days` : hours === 1 ? "1 hour" : `${hours} hours`);

const Field: FC<{ name: string; label: string; autocomplete: string; type?: string | undefined; values: Values; errors: Errors }> = (p) => {
  const id = p.name.replace(".", "-");
  const error = p.errors[p.name];
  return (
    <>
      <label for={id}>{p.label}</label>
      <input id={id} name={p.name} type={p.type ?? "text"} autocomplete={p.autocomplete} value={p.values[p.name] ?? ""} aria-invalid={error ? "true" : undefined} aria-describedby={error ? `${id}-error` : undefined} />
      {error ? (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      ) : null}
    </>
  );
};

async function renderCheckout(c: ShopContext, values: Values, errors: Errors, problem?: string, status: 200 | 400 | 409 = 200) {
  const { store } = c.var.shop;
  // Past the checkout threshold of this address or the store, the form carries the person check ahead
  // (the limiter asked while the database answers).
  const [{ cart, settings, preorders }, widget] = await Promise.all([readCheckout(c), checkoutWidget(c.var.shop, c.req.header("cf-connecting-ip"))]);
  const money = (minor: number) => formatMoney(minor, store.currency);
  // Pre-ordered units beyond the stock pay the store's deposit now and the balance when they arrive.
  const terms = cartDepositTerms(
    cart.lines.map((l) => ({ lineTotal: l.lineTotal, quantity: l.quantity, backordered: preorders.has(l.variantId) ? Math.max(0, l.quantity - l.available) : 0 })),
    cart.discount,
    settings.depositPercent,
  );
  c.header("cache-control", "no-store");
  const state = values["shippingAddress.state"] ?? "";
  const method = values["paymentMethod"] ?? "gateway";
  return c.html(
    <ShopPage head={{ storeName: store.name, title: "Checkout", description: `Check out at ${store.name}.`, noindex: true }}>
      <h1>Checkout</h1>
      <Alert message={problem} />
      {cart.lines.length === 0 ? (
        <EmptyCart />
      ) : (
        <>
          <h2>Your order</h2>
          <CartSummary cart={cart} money={money}>
            {terms && terms.later > 0 ? (
              <>
                <dt>Pay now</dt>
                <dd data-pay="now">{money(cart.total - terms.later)} and shipping</dd>
                <dt>Pay later</dt>
                <dd data-pay="later">{money(terms.later)}</dd>
              </>
            ) : null}
          </CartSummary>
          {terms ? <PreorderNote terms={terms} money={money} /> : null}
          <p class="muted">Prices include GST. Shipping and the GST in your order are shown on the next page, per parcel.</p>
          <form method="post" action="/checkout" class="card">
            <h2>Where to send it</h2>
            {FIELDS.map(([name, label, autocomplete, type]) => (
              <Field name={name} label={label} autocomplete={autocomplete} type={type} values={values} errors={errors} />
            ))}
            <label for="shippingAddress-state">State</label>
            <select id="shippingAddress-state" name="shippingAddress.state" autocomplete="address-level1" aria-invalid={errors["shippingAddress.state"] ? "true" : undefined}>
              <option value="">Choose your state</option>
              {INDIAN_STATE_CODES.map((code) => (
                <option value={code} selected={code === state}>
                  {INDIAN_STATE_NAMES[code]}
                </option>
              ))}
            </select>
            {errors["shippingAddress.state"] ? <p class="field-error">{errors["shippingAddress.state"]}</p> : null}
            <input type="hidden" name="shippingAddress.country" value="IN" />
            <fieldset>
              <legend>Business purchase (optional)</legend>
              <p class="muted">Give your GSTIN to have it and your legal name on the tax invoice.</p>
              <Field name="gstin" label="GSTIN" autocomplete="off" values={values} errors={errors} />
              <Field name="legalName" label="Legal name of the business" autocomplete="organization" values={values} errors={errors} />
            </fieldset>
            <fieldset>
              <legend>Payment</legend>
              <label>
                <input type="radio" name="paymentMethod" value="gateway" checked={method === "gateway"} /> Pay online now
              </label>
              {settings.manualTransfer ? (
                <label>
                  <input type="radio" name="paymentMethod" value="manual_transfer" checked={method === "manual_transfer"} /> Bank transfer (we hold your items for{" "}
                  {holdWords(settings.transferHoldHours)}, then release them if the money has not arrived)
                </label>
              ) : null}
              {errors["paymentMethod"] ? <p class="field-error">{errors["paymentMethod"]}</p> : null}
            </fieldset>
            <label class="check">
              <input type="checkbox" name="acceptsMarketing" value="yes" checked={values["acceptsMarketing"] === "yes"} /> Email me news and offers from {store.name}
              <span class="muted"> (we will email you a link to confirm)</span>
            </label>
            {widget ? <ChallengeWidget widget={widget} action="checkout" /> : null}
            <button type="submit">Place order</button>
          </form>
        </>
      )}
    </ShopPage>,
    status,
  );
}

/** What the cart's pre-ordered items pay now, what later and when (docs/order-status.md, "Pre-orders"). */
const PreorderNote: FC<{ terms: DepositTerms; money: (minor: number) => string }> = ({ terms, money }) => (
  <p class="muted" data-preorder-terms>
    {terms.later > 0
      ? `Pre-ordered items: you pay ${terms.percent}% of their price now and the rest, ${money(terms.later)}, when they arrive. We email you then, and you have ${terms.payWithinDays} days to pay it; they ship once it is paid.`
      : "Pre-ordered items are paid in full now and ship when they arrive."}
  </p>
);

export const checkoutPage = (c: ShopContext) => renderCheckout(c, {}, {});

/** Form fields (`shippingAddress.city`, …) as the nested input the API takes; empty optional fields left out. */
function nested(values: Values): Record<string, unknown> {
  const address: Record<string, string> = {};
  const top: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(values)) {
    if (value === "" && (key === "phone" || key === "shippingAddress.line2" || key === "gstin" || key === "legalName")) continue;
    if (key === "acceptsMarketing") top[key] = value === "yes";
    else if (key.startsWith("shippingAddress.")) address[key.slice("shippingAddress.".length)] = value;
    else top[key] = value;
  }
  return { ...top, shippingAddress: address };
}

/** A checkout form sent from another site (refused by the same-site guard shop.tsx mounts): the empty form again, 400. */
export const checkoutRefused = (c: ShopContext) => renderCheckout(c, {}, {}, "This form must be sent from the store's own page.", 400);

export async function submitCheckout(c: ShopContext) {
  const form = await c.req.parseBody().catch(() => ({}));
  // The person check's token was read at the door (limits.tsx); it is not part of the order.
  const values: Values = Object.fromEntries(
    Object.entries(form)
      .filter((e): e is [string, string] => typeof e[1] === "string" && e[0] !== CHALLENGE_FIELD)
      .map(([k, v]) => [k, v.slice(0, 500)]),
  );
  const parsed = checkoutInput.safeParse(nested(values));
  if (!parsed.success) {
    const errors: Errors = {};
    for (const issue of issuesOf(parsed.error)) errors[issue.path] ??= issue.message;
    return renderCheckout(c, values, errors, "Please check the highlighted fields.", 400);
  }
  try {
    const result = await checkoutAndPay(deps(c), getCookie(c, CART_COOKIE), parsed.data);
    return c.redirect(result.payment.redirectUrl ?? result.orderUrl, 303);
  } catch (e) {
    if (isAppError(e) && e.status === 409) return renderCheckout(c, values, {}, e.message, 409);
    // A refusal that names a field (bank transfer where the store offers none) is shown by that field.
    if (isAppError(e) && e.status === 400) {
      const errors: Errors = {};
      for (const issue of (e.data?.["issues"] as { path: string; message: string }[] | undefined) ?? []) errors[issue.path] ??= issue.message;
      return renderCheckout(c, values, errors, e.message, 400);
    }
    throw e;
  }
}
