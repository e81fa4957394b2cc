import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { withStore, type StoreTx } from "../db/with-store";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../log";
import { storefrontBase } from "../mail/links";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { RetryLater } from "../notifications/send";
import { AVAILABLE } from "../storefront/catalog";

/**
 * The `{back-in-stock}-restock` consumer (docs/back-in-stock.md). The relay sends it every event after which
 * a variant may be back online: `inventory.restocked`, `inventory.released` (an order expired or was
 * cancelled) and `return.received` with restock. For each variant that is available online now, each
 * waiting subscription gets one alert, in the notification log like every shopper message:
 *
 * 1. a store unit claims the subscription's `notification` row (event id = the subscription id, template
 *    `back_in_stock`, unique); a subscription no longer waiting, or a row already sent, is left alone;
 * 2. the mailer sends with the key `restock:<subscriptionId>`, outside any transaction;
 * 3. a store unit marks the row and the subscription `sent` (or `failed` for a refused address).
 *
 * A variant sold out again by then alerts nobody: its subscriptions keep waiting. A retryable mail error
 * leaves that subscription waiting and has the message retried once the others are done; a duplicate
 * delivery or a second restock event sends nobody a second alert.
 */
export const TEMPLATE = "back_in_stock";

/** The events the relay sends to this consumer: those after which a variant may be back online. */
export function mayRestock(kind: string, payload: Record<string, unknown>): boolean {
  return kind === "inventory.restocked" || kind === "inventory.released" || (kind === "return.received" && payload["restocked"] === true);
}
/** Subscriptions read at a time per variant; batches go on until none is left or the budget is spent. */
export const ALERT_BATCH = 200;
/** How long one delivery keeps alerting; what is left is finished by a redelivery. */
const BUDGET_MS = 60_000;

export interface RestockDeps {
  db: Database;
  log: Logger;
  mail: MailConfig;
}

export type AlertCounts = { sent: number; failed: number; retry: number; skipped: number };

interface VariantFacts {
  store_name: string;
  product_title: string;
  variant_title: string;
  handle: string;
  available: number;
}

/** The variants an event may have brought back. */
async function variantsOf(tx: StoreTx, message: RoutedEvent): Promise<string[]> {
  const p = message.payload;
  if (message.kind === "inventory.restocked") return isUuid(p["variantId"]) ? [p["variantId"]] : [];
  if (message.kind === "inventory.released") {
    const items = Array.isArray(p["items"]) ? (p["items"] as { variantId?: unknown }[]) : [];
    return [...new Set(items.map((i) => i.variantId).filter(isUuid))];
  }
  if (message.kind === "return.received" && p["restocked"] === true && isUuid(p["returnId"])) {
    const { rows } = await tx.$client.query<{ variant_id: string }>(
      `select distinct ol.variant_id from order_return_line rl join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
       where rl.store_id = $1 and rl.return_id = $2 and ol.variant_id is not null`,
      [tx.storeId, p["returnId"]],
    );
    return rows.map((r) => r.variant_id);
  }
  return [];
}

export async function sendRestockAlerts(message: RoutedEvent, deps: RestockDeps): Promise<AlertCounts> {
  const counts: AlertCounts = { sent: 0, failed: 0, retry: 0, skipped: 0 };
  if (!isUuid(message.eventId)) return counts;
  const started = Date.now();
  const tried: string[] = [];
  for (;;) {
    const work = await waitingWork(deps, message, tried);
    if (work.length === 0) break;
    for (const { facts, waiting, base } of work) {
      for (const sub of waiting) {
        tried.push(sub.id);
        counts[await alertOne(deps, message, sub, facts, base)]++;
      }
    }
    if (Date.now() - started > BUDGET_MS) {
      throw new RetryLater(`alerted ${counts.sent}; more subscribers waiting`, 1);
    }
  }
  if (counts.retry > 0) throw new RetryLater(`${counts.retry} alert(s) to retry`);
  return counts;
}

/** Each variant of the event that is available online now, with up to a batch of its waiting subscriptions not tried yet. */
async function waitingWork(deps: RestockDeps, message: RoutedEvent, tried: readonly string[]) {
  return withStore(
    deps.db,
    message.storeId,
    async (tx) => {
      const out: { facts: VariantFacts; waiting: { id: string; email: string }[]; base: string | null }[] = [];
      const base = await storefrontBase(tx);
      for (const variantId of await variantsOf(tx, message)) {
        const { rows } = await tx.$client.query<VariantFacts>(
          `select s.name as store_name, p.title as product_title, v.title as variant_title, p.handle, ${AVAILABLE} as available
           from product_variant v join product p on p.store_id = v.store_id and p.id = v.product_id join store s on s.id = v.store_id
           where v.store_id = $1 and v.id = $2 and p.status = 'active'`,
          [tx.storeId, variantId],
        );
        const facts = rows[0];
        if (!facts || facts.available <= 0) continue;
        const waiting = await tx.$client.query<{ id: string; email: string }>(
          `select id, email from restock_subscription where store_id = $1 and variant_id = $2 and status = 'waiting' and id <> all($4::uuid[])
           order by created_at, id limit $3`,
          [tx.storeId, variantId, ALERT_BATCH, tried],
        );
        if (waiting.rows.length > 0) out.push({ facts, waiting: waiting.rows, base });
      }
      return out;
    },
    { readOnly: true },
  );
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

function render(facts: VariantFacts, base: string | null) {
  const name = facts.variant_title === "Default" ? facts.product_title : `${facts.product_title} (${facts.variant_title})`;
  const url = base ? `${base}/products/${facts.handle}` : null;
  const lines = [`Good news: ${name} is back in stock at ${facts.store_name}.`, "You asked us to tell you once; this is the only email about it. It may sell out again, so do not wait too long."];
  return {
    subject: `${name} is back · ${facts.store_name}`.slice(0, 300),
    text: [...lines, ...(url ? ["", url] : []), "", `— ${facts.store_name}`].join("\n"),
    html: `${lines.map((l) => `<p>${escape(l)}</p>`).join("")}${url ? `<p><a href="${escape(url)}">${escape(name)}</a></p>` : ""}<p>${escape(`— ${facts.store_name}`)}</p>`,
  };
}

async function alertOne(deps: RestockDeps, message: RoutedEvent, sub: { id: string; email: string }, facts: VariantFacts, base: string | null): Promise<keyof AlertCounts> {
  const rendered = render(facts, base);
  const claimed = await withStore(deps.db, message.storeId, async (tx) => {
    const { rows } = await tx.$client.query<{ status: string }>("select status from restock_subscription where store_id = $1 and id = $2 for update", [tx.storeId, sub.id]);
    if (rows[0]?.status !== "waiting") return false;
    const log = await tx.$client.query<{ status: string }>(
      `insert into notification (store_id, event_id, template, recipient, subject, attempts) values ($1, $2, $3, $4, $5, 1)
       on conflict (store_id, event_id, template) do update set attempts = notification.attempts + 1 returning status`,
      [tx.storeId, sub.id, TEMPLATE, sub.email, rendered.subject],
    );
    return log.rows[0]!.status === "sending";
  });
  if (!claimed) return "skipped";
  const record = (status: "sent" | "failed" | "waiting", error?: string, providerId?: string) =>
    withStore(deps.db, message.storeId, async (tx) => {
      await tx.$client.query(
        `update notification set status = $4, provider = $5, provider_id = coalesce($6, provider_id), last_error = $7, sent_at = case when $4 = 'sent' then now() else sent_at end
         where store_id = $1 and event_id = $2 and template = $3`,
        [tx.storeId, sub.id, TEMPLATE, status === "waiting" ? "sending" : status, deps.mail.mailer.provider, providerId ?? null, error?.slice(0, 1000) ?? null],
      );
      if (status !== "waiting") {
        await tx.$client.query("update restock_subscription set status = $3, notified_at = now(), event_id = $4 where store_id = $1 and id = $2", [tx.storeId, sub.id, status, message.eventId]);
      }
    });
  try {
    const sent = await deps.mail.mailer.send({
      storeId: message.storeId,
      from: `${facts.store_name.replace(/[<>"]/g, "")} <orders@${deps.mail.fromDomain}>`,
      to: sub.email,
      ...rendered,
      idempotencyKey: `restock:${sub.id}`,
      tag: TEMPLATE,
    });
    await record("sent", undefined, sent.providerId);
    return "sent";
  } catch (e) {
    if (!(e instanceof MailError)) throw e;
    deps.log.warn("restock.alert_failed", { storeId: message.storeId, subscriptionId: sub.id, kind: e.kind, retryable: e.retryable });
    await record(e.retryable ? "waiting" : "failed", e.message);
    return e.retryable ? "retry" : "failed";
  }
}
