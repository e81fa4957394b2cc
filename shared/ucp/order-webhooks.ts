/**
 * Order updates to the agent (issue 26 item 4; docs/ucp.md "Order updates to the agent"): when an order an
 * agent placed through a checkout session is paid, shipped, delivered, cancelled or refunded, the agent's
 * platform receives the order as it now stands at the order webhook URL its profile gave (the session's
 * `webhook_url`), signed with the store's UCP key, as the specification's order capability says.
 *
 * It rides the apps' machinery: the outbox relay sends each of UCP_ORDER_KINDS to the {apps}-events queue a
 * second time with the route `ucp_order` (shared/jobs/routing.ts), whose consumer (consumeUcpOrderEvent) makes
 * one `ucp_order_delivery` row per event (unique, so a repeated message or a replayed relay adds none) and
 * queues its first try on the {apps}-jobs queue; each try (consumeUcpOrderJob) is claimed, sent outside any
 * transaction and recorded, in two round trips, and a failure is tried again with the apps' delays
 * (shared/apps/backoff.ts) until a 2xx or the last try. The entity is built when it is sent, from the order's
 * rows, so a late retry never sends an old state.
 */
import { and, eq, isNull, ne, sql } from "drizzle-orm";
import { z } from "zod";
import { AppError } from "../core/errors";
import type { Logger } from "../core/log";
import { emitStep, ensure } from "../db/changes";
import type { Database } from "../db/database";
import { plan, together, type Plan } from "../db/plan";
import { fulfillmentOrder, fulfillmentOrderLine, ucpCheckoutSession, ucpOrderDelivery } from "../db/schema";
import { CURRENT_STORE, type Q } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { orderDetail, orderView } from "../orders/statements/order-view";
import { claimableTry, triedFields } from "../apps/attempt";
import { MAX_ATTEMPTS } from "../apps/backoff";
import { postSigned, type FetchLike, type SendOutcome } from "../apps/send";
import { appUrlProblem } from "../apps/url";
import { primaryHostnamePlan } from "../storefront/catalog";
import { orderEntity, type OrderSnapshot } from "./order-entity";
import { sessionOrderPath } from "./session-cart";
import { signMessage } from "./signatures";
import { addOrderDelivery } from "./statements";
import { openStoreKey, signingKeyPlan, type UcpSigningConfig } from "./store-keys";

/** The route of the {apps}-events messages for agents (RoutedEvent.route). */
export const UCP_ORDER_ROUTE = "ucp_order";

/**
 * The order changes an agent is told of: paid (also money landing on an order already closed), shipped (every
 * parcel booked), delivered, cancelled, refunded (each refund). An order's placing is not one: it is placed
 * unpaid and the agent follows its session (`requires_escalation`, then `completed` once paid), so the first
 * update, the specification's "order created", is sent when the money comes in.
 */
export const UCP_ORDER_KINDS = ["order.paid", "order.paid_late", "order.fulfilled", "order.delivered", "order.cancelled", "order.refunded"] as const;

/** Written by salesChannels.resendOrderUpdate: it asks the {apps}-events consumer to queue one update's new round. Never public. */
export const UCP_RESEND_KIND = "ucp.order_update_resend_requested";

/** The relay's rule (shared/jobs/routing.ts): these kinds (and a resend) also go to the {apps}-events queue with UCP_ORDER_ROUTE. */
export const goesToAgents = (kind: string): boolean => kind === UCP_RESEND_KIND || (UCP_ORDER_KINDS as readonly string[]).includes(kind);

/** The payment states in which the session reads `completed` (./checkout-order-view.ts): updates are sent from then on. */
const MONEY_CAME = ["authorized", "partially_paid", "paid", "partially_refunded", "refunded"] as const;

const routedSchema = z.object({
  eventId: z.uuid(),
  storeId: z.uuid(),
  kind: z.enum([...UCP_ORDER_KINDS, UCP_RESEND_KIND]),
  payload: z.looseObject({ orderId: z.uuid(), deliveryId: z.uuid().optional() }),
  createdAt: z.iso.datetime({ offset: true }),
  route: z.literal(UCP_ORDER_ROUTE),
});

/** One message of the {apps}-jobs queue for an agent: try `attempt` of one order update. */
export const ucpOrderJobSchema = z.strictObject({
  to: z.literal(UCP_ORDER_ROUTE),
  storeId: z.uuid(),
  deliveryId: z.uuid(),
  orderId: z.uuid(),
  attempt: z.number().int().min(1).max(MAX_ATTEMPTS),
});
export type UcpOrderJob = z.infer<typeof ucpOrderJobSchema>;

/** Whether an {apps}-events or {apps}-jobs message is one for agents (the worker's dispatch). */
export function isForAgents(body: unknown): boolean {
  if (typeof body !== "object" || body === null) return false;
  const b = body as { route?: unknown; to?: unknown };
  return b.route === UCP_ORDER_ROUTE || b.to === UCP_ORDER_ROUTE;
}

export interface UcpOrderDeps {
  db: Database;
  log: Logger;
  now: Date;
  fetch: FetchLike;
  /** The {apps}-jobs producer. */
  jobs: { send(job: UcpOrderJob, options: { delaySeconds: number }): Promise<void> };
  /** UCP_SIGNING_ROOT_SECRET: the store's key is sealed under it, and the order link derives from it. */
  signing: UcpSigningConfig;
  /** Development and test: local receivers are allowed (the apps' URL policy). */
  allowLocalUrls: boolean;
  random?: () => number;
  timeoutMs?: number;
}

/** Deliveries not tried yet: what a (repeated) message may queue. */
const untried = and(eq(ucpOrderDelivery.storeId, CURRENT_STORE), eq(ucpOrderDelivery.status, "pending"), eq(ucpOrderDelivery.attempts, 0), isNull(ucpOrderDelivery.claimedAt));

/**
 * The {apps}-events consumer of UCP_ORDER_ROUTE: one round trip; nothing for an order no agent waits on. A
 * resend (UCP_RESEND_KIND) queues the first try of its delivery's new round while that round is not tried yet.
 */
export async function consumeUcpOrderEvent(body: unknown, deps: Pick<UcpOrderDeps, "db" | "log" | "jobs">): Promise<{ queued: number }> {
  const event = routedSchema.parse(body);
  const { orderId, deliveryId } = event.payload;
  const resend = event.kind === UCP_RESEND_KIND;
  if (resend && !deliveryId) throw new Error(`${UCP_RESEND_KIND} without a deliveryId`);
  const due = await sendStoreUnit(
    deps.db,
    event.storeId,
    (q) => {
      const read = q.select({ id: ucpOrderDelivery.id }).from(ucpOrderDelivery);
      if (resend) return plan([read.where(and(untried, eq(ucpOrderDelivery.id, deliveryId!), eq(ucpOrderDelivery.orderId, orderId)))] as const, ([rows]) => rows);
      return plan(
        [
          addOrderDelivery(q, { orderId, eventId: event.eventId, kind: event.kind, createdAt: new Date(event.createdAt), paid: MONEY_CAME }),
          read.where(and(untried, eq(ucpOrderDelivery.eventId, event.eventId))),
        ] as const,
        ([, rows]) => rows,
      );
    },
    { readOnly: resend },
  );
  await Promise.all(due.map((d) => deps.jobs.send({ to: UCP_ORDER_ROUTE, storeId: event.storeId, deliveryId: d.id, orderId, attempt: 1 }, { delaySeconds: 0 })));
  if (due.length > 0) deps.log.info(resend ? "ucp.order_update_resend_queued" : "ucp.order_update_queued", { storeId: event.storeId, eventId: event.eventId, kind: event.kind, orderId });
  return { queued: due.length };
}

const updateNotFound = () => new AppError("NOT_FOUND", "Order update not found in this store.");

/**
 * Sends one order update again (salesChannels.resendOrderUpdate), in the caller's unit: a delivered or failed
 * update becomes pending with no tries (a new round) and an outbox event asks the {apps}-events consumer to
 * queue its first try, in the same transaction (SPEC rule 5: nothing is queued before the commit). The
 * update is built when it is sent, so the agent gets the order as it then stands, under the same Webhook-Id.
 * An update pending and not tried yet is left as it is (its try is queued already); one being tried is a
 * conflict. Another store's delivery is not found.
 */
export function resendOrderUpdateSteps(q: Q, deliveryId: string) {
  const delivery = and(eq(ucpOrderDelivery.storeId, CURRENT_STORE), eq(ucpOrderDelivery.id, deliveryId));
  const finished = and(delivery, ne(ucpOrderDelivery.status, "pending"));
  const message = "This order update is being tried now; wait until it is delivered or has failed, then send it again.";
  return [
    ensure(q, sql`exists (select 1 from ${ucpOrderDelivery} where ${delivery} for update)`, updateNotFound()),
    ensure(
      q,
      sql`not exists (select 1 from ${ucpOrderDelivery} where ${delivery} and ${ucpOrderDelivery.status} = 'pending' and (${ucpOrderDelivery.attempts} > 0 or ${ucpOrderDelivery.claimedAt} is not null))`,
      new AppError("CONFLICT", message, { issues: [{ path: "deliveryId", message }] }),
    ),
    emitStep(
      q,
      UCP_RESEND_KIND,
      sql`(select jsonb_build_object('deliveryId', ${ucpOrderDelivery.id}, 'orderId', ${ucpOrderDelivery.orderId}) from ${ucpOrderDelivery} where ${delivery})`,
      { when: sql`exists (select 1 from ${ucpOrderDelivery} where ${finished})` },
    ),
    q
      .update(ucpOrderDelivery)
      .set({ status: "pending", attempts: 0, claimedAt: null, deliveredAt: null, nextAttemptAt: sql`now()`, updatedAt: sql`now()` })
      .where(finished),
  ] as const;
}

// A try ----------------------------------------------------------------------------------------------------

/** The order as the entity is built from it: its view, its detail and its parcels' lines, by the orders' own statements. */
function snapshotPlan(q: Q, orderId: string): Plan<OrderSnapshot | undefined> {
  return plan(
    [
      orderView(q, CURRENT_STORE, orderId),
      orderDetail(q, CURRENT_STORE, orderId),
      q
        .select({ parcelId: fulfillmentOrderLine.fulfillmentOrderId, orderLineId: fulfillmentOrderLine.orderLineId, quantity: fulfillmentOrderLine.quantity })
        .from(fulfillmentOrderLine)
        .innerJoin(fulfillmentOrder, and(eq(fulfillmentOrder.storeId, fulfillmentOrderLine.storeId), eq(fulfillmentOrder.id, fulfillmentOrderLine.fulfillmentOrderId)))
        .where(and(eq(fulfillmentOrder.storeId, CURRENT_STORE), eq(fulfillmentOrder.orderId, orderId))),
    ] as const,
    ([[view], [detail], parcelLines]) => {
      if (!view || !detail) return undefined;
      const o = view.order;
      return {
        ...o,
        discountCode: detail.discount_code,
        shippingAddress: detail.shipping_address as Record<string, string>,
        cancelledAt: detail.events.find((e) => e.kind === "order.cancelled")?.createdAt ?? null,
        lines: detail.lines,
        parcels: o.parcels.map((p) => ({ id: p.id, lines: parcelLines.filter((l) => l.parcelId === p.id) })),
        shipments: detail.shipments,
        refunds: detail.refunds,
        returns: detail.returns,
      };
    },
  );
}

/** Claims the try, reads the delivery as it is (for a try it could not claim) and everything the update is made of. */
function claimPlan(q: Q, job: UcpOrderJob, now: Date) {
  const delivery = and(eq(ucpOrderDelivery.storeId, CURRENT_STORE), eq(ucpOrderDelivery.id, job.deliveryId));
  return together({
    row: plan(
      [
        q
          .update(ucpOrderDelivery)
          .set({ attempts: job.attempt, claimedAt: now, lastAttemptAt: now, updatedAt: now })
          .where(
            and(delivery, eq(ucpOrderDelivery.status, "pending"), claimableTry(ucpOrderDelivery, job.attempt, now)),
          )
          .returning({ eventKind: ucpOrderDelivery.eventKind, eventCreatedAt: ucpOrderDelivery.eventCreatedAt }),
        q
          .select({ status: ucpOrderDelivery.status, attempts: ucpOrderDelivery.attempts, claimedAt: ucpOrderDelivery.claimedAt, nextAttemptAt: ucpOrderDelivery.nextAttemptAt })
          .from(ucpOrderDelivery)
          .where(delivery),
        q
          .select({ id: ucpCheckoutSession.id, webhookUrl: ucpCheckoutSession.webhookUrl, host: ucpCheckoutSession.host })
          .from(ucpCheckoutSession)
          .where(and(eq(ucpCheckoutSession.storeId, CURRENT_STORE), eq(ucpCheckoutSession.orderId, job.orderId))),
      ] as const,
      ([[claimed], [state], [session]]) => ({ claimed, state, session }),
    ),
    order: snapshotPlan(q, job.orderId),
    key: signingKeyPlan(q),
    host: primaryHostnamePlan(q),
  });
}

type Read = ReturnType<typeof claimPlan> extends Plan<infer O> ? O : never;
type Prepared = { kind: "send"; url: string; headers: Record<string, string>; body: string } | { kind: "refused"; error: string; final: boolean };

/** The signed POST of the update, or why there is none (`final`: no later try can send it). */
async function prepare(job: UcpOrderJob, read: Read, deps: UcpOrderDeps): Promise<Prepared> {
  const { session, claimed } = read.row;
  const url = session?.webhookUrl;
  if (!session || !url || !read.order) return { kind: "refused", error: "The order's checkout session no longer names an order webhook URL.", final: true };
  const problem = appUrlProblem(url, deps.allowLocalUrls);
  if (problem) return { kind: "refused", error: `The agent's webhook URL is refused: ${problem}`, final: true };
  // The domain the agent bought on (its session's), else the store's primary domain.
  const host = session.host ?? read.host;
  if (!host) return { kind: "refused", error: "The store has no verified primary domain, so its UCP profile (and the key that signs) cannot be named: verify a domain.", final: false };
  if (!read.key) return { kind: "refused", error: "The store has no UCP signing key (one is made when agentic checkout is turned on); nothing is sent unsigned.", final: false };
  let key;
  try {
    key = await openStoreKey(deps.signing, job.storeId, read.key);
  } catch {
    return { kind: "refused", error: "The store's UCP signing key cannot be opened (UCP_SIGNING_ROOT_SECRET changed): rotate the store's key.", final: false };
  }
  const origin = `https://${host}`;
  const permalink = `${origin}${await sessionOrderPath(deps.signing.rootSecret, job.storeId, session.id, job.orderId)}`;
  const occurred = claimed!.eventCreatedAt;
  // The entity, with the event's id and time as the specification's example and Google's staleness check read them.
  const body = JSON.stringify({ ...orderEntity(read.order, session.id, permalink), event_id: job.deliveryId, created_time: occurred.toISOString() });
  const headers: Record<string, string> = {
    "content-type": "application/json",
    "ucp-agent": `profile="${origin}/.well-known/ucp"`,
    "webhook-id": job.deliveryId,
    "webhook-timestamp": String(Math.floor(occurred.getTime() / 1000)),
    "user-agent": "Commerce-UCP/1",
  };
  const signed = await signMessage({ method: "POST", url, headers: new Headers(headers), body: new TextEncoder().encode(body) }, key, Math.floor(deps.now.getTime() / 1000));
  return { kind: "send", url, headers: { ...headers, ...signed }, body };
}

/** Records the try's outcome if the claim still holds; answers the next try's delay when there is one. */
function recordPlan(q: Q, job: UcpOrderJob, outcome: SendOutcome, final: boolean, deps: UcpOrderDeps) {
  const { now } = deps;
  const { delay, status, set } = triedFields(outcome, job.attempt, final, now, deps.random);
  return plan(
    [
      q
        .update(ucpOrderDelivery)
        .set(set)
        .where(and(eq(ucpOrderDelivery.storeId, CURRENT_STORE), eq(ucpOrderDelivery.id, job.deliveryId), eq(ucpOrderDelivery.attempts, job.attempt), eq(ucpOrderDelivery.claimedAt, now)))
        .returning({ id: ucpOrderDelivery.id }),
    ] as const,
    ([[row]]) => ({ recorded: row !== undefined, status, delay }),
  );
}

const nextJob = (job: UcpOrderJob): UcpOrderJob | null => (job.attempt < MAX_ATTEMPTS ? { ...job, attempt: job.attempt + 1 } : null);

/** The {apps}-jobs consumer of an agent's order update; throws (so the queue retries it) only when the database or the queue fails. */
export async function consumeUcpOrderJob(body: unknown, deps: UcpOrderDeps): Promise<{ outcome: string }> {
  const job = ucpOrderJobSchema.parse(body);
  const { now } = deps;
  const log = deps.log.child({ storeId: job.storeId, deliveryId: job.deliveryId, orderId: job.orderId, attempt: job.attempt });
  const read = await sendStoreUnit(deps.db, job.storeId, (q) => claimPlan(q, job, now), { readOnly: false });
  if (!read.row.claimed) {
    // Not claimable: done already, or this try was made and its follow-up may not have been queued.
    const s = read.row.state;
    if (!(s?.status === "pending" && s.attempts === job.attempt && s.claimedAt === null)) return { outcome: "skipped" };
    const next = nextJob(job);
    const waitMs = (s.nextAttemptAt?.getTime() ?? now.getTime()) - now.getTime();
    if (next) await deps.jobs.send(next, { delaySeconds: Math.max(0, Math.ceil(waitMs / 1000)) });
    return { outcome: "requeued" };
  }
  const started = Date.now();
  const prepared = await prepare(job, read, deps);
  const outcome: SendOutcome = prepared.kind === "send" ? await postSigned(deps.fetch, prepared.url, prepared.headers, prepared.body, deps.timeoutMs) : { ok: false, status: null, error: prepared.error };
  const final = prepared.kind === "refused" && prepared.final;
  const result = await sendStoreUnit(deps.db, job.storeId, (q) => recordPlan(q, job, outcome, final, deps), { readOnly: false });
  const fields = { kind: read.row.claimed.eventKind, status: outcome.status, ms: Date.now() - started, next: result.status };
  if (outcome.ok) log.info("ucp.order_update_delivered", fields);
  else log.warn("ucp.order_update_failed", { ...fields, error: outcome.error, retryInSeconds: result.delay });
  const next = nextJob(job);
  if (result.recorded && result.delay !== null && next) await deps.jobs.send(next, { delaySeconds: result.delay });
  return { outcome: result.status };
}
