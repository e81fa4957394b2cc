import type { Database } from "../db/database";
import { isUuid } from "../db/ids";
import { CURRENT_STORE } from "../db/openings";
import { mapPlan, plan, together, type Plan } from "../db/plan";
import { sql, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import type { RoutedEvent } from "../events/routes";
import type { Logger } from "../core/log";
import { storefrontBasePlan } from "../mail/links";
import { MailError } from "../mail/mailer";
import type { MailConfig } from "../mail/select";
import { RetryLater } from "../notifications/send";
import { countAlertTries, markAlerted, waitingSubscriptions } from "./statements";

/**
 * The `{back-in-stock}-restock` consumer (docs/back-in-stock.md). The relay sends it every event after which
 * a variant may be back online: `inventory.restocked`, `inventory.released` (an order expired or was
 * cancelled) and `return.received` with restock. For each variant that is available online now, each
 * waiting subscription gets one alert, in the notification log like every shopper message:
 *
 * 1. a store unit reads a batch of waiting subscriptions of the variants available now (one whose
 *    `notification` row, event id = the subscription id and template `back_in_stock`, is finished is left
 *    alone);
 * 2. the mailer sends each with the key `restock:<subscriptionId>`, outside any transaction;
 * 3. a store unit records the batch: each subscription still waiting is marked `sent` (or `failed` for a
 *    refused address) with its `notification` row; one another delivery finished meanwhile is left alone.
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

type VariantFacts = {
  store_name: string;
  product_title: string;
  variant_title: string;
  handle: string;
};

interface Work {
  facts: VariantFacts;
  waiting: { id: string; email: string }[];
}

/** The variants an event may have brought back, as SQL (a return's lines are read by the unit itself). */
function variantsOf(message: RoutedEvent) {
  const p = message.payload;
  const ids = (list: string[]) => sql`select v, n from unnest(${`{${list.join(",")}}`}::uuid[]) with ordinality as x(v, n)`;
  if (message.kind === "inventory.restocked") return ids(isUuid(p["variantId"]) ? [p["variantId"]] : []);
  if (message.kind === "inventory.released") {
    const items = Array.isArray(p["items"]) ? (p["items"] as { variantId?: unknown }[]) : [];
    return ids([...new Set(items.map((i) => i.variantId).filter(isUuid))]);
  }
  if (message.kind === "return.received" && p["restocked"] === true && isUuid(p["returnId"])) {
    return sql`select distinct ol.variant_id as v, 1 as n from order_return_line rl join order_line ol on ol.store_id = rl.store_id and ol.id = rl.order_line_id
      where rl.store_id = ${CURRENT_STORE} and rl.return_id = ${p["returnId"]} and ol.variant_id is not null`;
  }
  return ids([]);
}

/** Each variant of the event that is available online now, with up to a batch of its waiting subscriptions not tried yet. */
function waitingPlan(q: Q, message: RoutedEvent, tried: readonly string[]): Plan<{ work: Work[]; base: string | null; more: boolean }> {
  const waiting = plan(
    [
      waitingSubscriptions(q, variantsOf(message), tried, { template: TEMPLATE, batch: ALERT_BATCH }),
    ] as const,
    ([rows]) => {
      const byVariant = new Map<string, Work>();
      for (const { variant_id, id, email, ...facts } of rows) {
        const work = byVariant.get(variant_id) ?? { facts, waiting: [] };
        work.waiting.push({ id, email });
        byVariant.set(variant_id, work);
      }
      const work = [...byVariant.values()];
      return { work, more: work.some((w) => w.waiting.length >= ALERT_BATCH) };
    },
  );
  return mapPlan(together({ waiting, base: storefrontBasePlan(q) }), (o) => ({ ...o.waiting, base: o.base }));
}

export async function sendRestockAlerts(message: RoutedEvent, deps: RestockDeps): Promise<AlertCounts> {
  const counts: AlertCounts = { sent: 0, failed: 0, retry: 0, skipped: 0 };
  if (!isUuid(message.eventId)) return counts;
  const started = Date.now();
  const tried: string[] = [];
  for (;;) {
    const { work, base, more } = await sendStoreUnit(deps.db, message.storeId, (q) => waitingPlan(q, message, tried));
    if (work.length === 0) break;
    const outcomes: Outcome[] = [];
    try {
      for (const { facts, waiting } of work) {
        const rendered = render(facts, base);
        for (const sub of waiting) {
          tried.push(sub.id);
          outcomes.push(await alertOne(deps, message, sub, facts, rendered));
        }
      }
    } finally {
      // What was sent is recorded even when an unexpected error stops the batch.
      if (outcomes.length > 0) for (const kind of await record(deps, message, outcomes)) counts[kind]++;
    }
    if (!more) break;
    if (Date.now() - started > BUDGET_MS) {
      throw new RetryLater(`alerted ${counts.sent}; more subscribers waiting`, 1);
    }
  }
  if (counts.retry > 0) throw new RetryLater(`${counts.retry} alert(s) to retry`);
  return counts;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);

type Rendered = { subject: string; text: string; html: string };

function render(facts: VariantFacts, base: string | null): Rendered {
  const name = facts.variant_title === "Default" ? facts.product_title : `${facts.product_title} (${facts.variant_title})`;
  const url = base ? `${base}/products/${facts.handle}` : null;
  const lines = [`Good news: ${name} is back in stock at ${facts.store_name}.`, "You asked us to tell you once; this is the only email about it. It may sell out again, so do not wait too long."];
  return {
    subject: `${name} is back · ${facts.store_name}`.slice(0, 300),
    text: [...lines, ...(url ? ["", url] : []), "", `— ${facts.store_name}`].join("\n"),
    html: `${lines.map((l) => `<p>${escape(l)}</p>`).join("")}${url ? `<p><a href="${escape(url)}">${escape(name)}</a></p>` : ""}<p>${escape(`— ${facts.store_name}`)}</p>`,
  };
}

/** One alert's try: `waiting` when the provider asks for a retry (the subscription keeps waiting). */
interface Outcome {
  id: string;
  email: string;
  subject: string;
  status: "sent" | "failed" | "waiting";
  provider_id: string | null;
  error: string | null;
}

async function alertOne(deps: RestockDeps, message: RoutedEvent, sub: { id: string; email: string }, facts: VariantFacts, rendered: Rendered): Promise<Outcome> {
  const tried = { id: sub.id, email: sub.email, subject: rendered.subject };
  try {
    const sent = await deps.mail.mailer.send({
      storeId: message.storeId,
      from: `${facts.store_name.replace(/[<>"]/g, "")} <orders@${deps.mail.fromDomain}>`,
      to: sub.email,
      ...rendered,
      idempotencyKey: `restock:${sub.id}`,
      tag: TEMPLATE,
    });
    return { ...tried, status: "sent", provider_id: sent.providerId, error: null };
  } catch (e) {
    if (!(e instanceof MailError)) throw e;
    deps.log.warn("restock.alert_failed", { storeId: message.storeId, subscriptionId: sub.id, kind: e.kind, retryable: e.retryable });
    return { ...tried, status: e.retryable ? "waiting" : "failed", provider_id: null, error: e.message.slice(0, 1000) };
  }
}

/**
 * Records a batch's tries in one unit: each subscription still waiting becomes `sent` or `failed`, and its
 * notification row counts the try (a row another delivery finished is left alone). Answers each try's count.
 */
async function record(deps: RestockDeps, message: RoutedEvent, outcomes: readonly Outcome[]): Promise<(keyof AlertCounts)[]> {
  const tries = JSON.stringify(outcomes);
  const marked = await sendStoreUnit(
    deps.db,
    message.storeId,
    (q) =>
      plan(
        [
          markAlerted(q, message.eventId, tries),
          countAlertTries(q, TEMPLATE, deps.mail.mailer.provider, tries),
        ] as const,
        ([rows]) => new Set(rows.map((r) => r.id)),
      ),
    { readOnly: false },
  );
  return outcomes.map((o) => (o.status === "waiting" ? "retry" : marked.has(o.id) ? o.status : "skipped"));
}
