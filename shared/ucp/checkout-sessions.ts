import { and, eq, gt, inArray, isNull, notInArray, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Database } from "../db/database";
import { CURRENT_STORE } from "../db/openings";
import { constant, plan, together, type Plan } from "../db/plan";
import { ratesPlan } from "../rules/gst-rates";
import { discount, page, product, productVariant, store, ucpCheckoutSession } from "../db/schema";
import type { Q, ResultOf, Step } from "../db/steps";
import { sendStoreUnit } from "../db/unit";
import { isAppError } from "../core/errors";
import { pgErrorOf } from "../db/pg-errors";
import { cancelPlan, cancelReadingPlan, type Cancel } from "../orders/actions";
import { AVAILABLE } from "../storefront/catalog";
import { DISCOUNT_STATE, type DiscountState } from "../storefront/discount-state";
import type { SessionAsked } from "./checkout-input";

/**
 * UCP checkout sessions (issue 26 item 3; docs/ucp.md): create, read, replace and cancel. A session keeps
 * only what the agent asked for (./checkout-input.ts); every answer prices it afresh from the catalogue with
 * the cart's own arithmetic (shared/storefront/cart-totals.ts), stock as the cart's change checks it
 * (`AVAILABLE`), discount codes as the cart applies them (one live code, `DISCOUNT_STATE`), and the address
 * checked by checkout's own rules (shared/orders/checkout-input.ts). What is missing or wrong is a message
 * with the JSONPath of its field; the status is `incomplete` while any error remains, `ready_for_complete`
 * when none does. A session is its store's (row-level security) and its agent's (the `UCP-Agent` profile
 * that made it): for anyone else it does not exist. Completing places the order (./checkout-complete.ts); from
 * then on the session reads as its order stands (./checkout-order-view.ts) and cannot change.
 */

import { checkoutView, normalCode, TERMINAL, type CatalogueRead, type SessionRow, type StoreRead, type UcpCheckout } from "./checkout-session-view";
export { checkoutView, sessionNotFound, type UcpCheckout, type UcpMessage } from "./checkout-session-view";
import { placedOrderPlan, placedView } from "./checkout-order-view";
import { isUuid } from "../db/ids";

// Reading -------------------------------------------------------------------------------------------------

/** A published page's handle to the link type UCP knows it by (the first match). */
const POLICY_LINKS: [RegExp, string][] = [
  [/privacy/, "privacy_policy"],
  [/terms/, "terms_of_service"],
  [/refund|return/, "refund_policy"],
  [/shipping|delivery/, "shipping_policy"],
  [/faq/, "faq"],
];


const v = alias(productVariant, "v");

export function storePlan(q: Q): Plan<StoreRead | null> {
  return plan(
    [
      q
        .select({ enabled: store.agenticCheckout, currency: store.currency, fee: store.shippingFeeMinor, freeOver: store.freeShippingOverMinor })
        .from(store)
        .where(eq(store.id, CURRENT_STORE)),
      q
        .select({ handle: page.handle, title: page.title })
        .from(page)
        .where(and(eq(page.storeId, CURRENT_STORE), eq(page.status, "published")))
        .orderBy(page.handle)
        .limit(50),
    ] as const,
    ([[row], pages]) => {
      if (!row) return null;
      const links = pages.flatMap((p) => {
        const type = POLICY_LINKS.find(([pattern]) => pattern.test(p.handle))?.[1];
        return type ? [{ type, url: `/pages/${p.handle}`, title: p.title }] : [];
      });
      return { ...row, fee: Number(row.fee), freeOver: row.freeOver === null ? null : Number(row.freeOver), links };
    },
  );
}

/** The variants a session names (published or not, to say which) and its codes' discounts, in one unit with whatever else it sends. */
export function cataloguePlan(q: Q, asked: SessionAsked): Plan<CatalogueRead> {
  const ids = [...new Set(asked.lineItems.map((l) => l.variant_id).filter((id) => isUuid(id)))];
  const codes = [...new Set(asked.discountCodes.map(normalCode))];
  const rates = ratesPlan(q, new Date());
  return plan(
    [
      q
        .select({
          id: v.id,
          productTitle: product.title,
          variantTitle: v.title,
          price: v.priceMinor,
          active: sql<boolean>`${product.status} = 'active'`,
          preorder: v.preorder,
          taxClass: v.taxClass,
          available: sql<number>`${sql.raw(AVAILABLE)}`,
        })
        .from(v)
        .innerJoin(product, and(eq(product.storeId, v.storeId), eq(product.id, v.productId)))
        .where(and(eq(v.storeId, CURRENT_STORE), inArray(v.id, ids.length ? ids : ["00000000-0000-0000-0000-000000000000"]))),
      // DISCOUNT_STATE reads the bare columns of discount, so discount stays the only table of this query.
      q
        .select({ code: discount.code, kind: discount.kind, value: discount.value, state: sql<DiscountState>`${DISCOUNT_STATE}` })
        .from(discount)
        .where(and(eq(discount.storeId, CURRENT_STORE), inArray(discount.code, codes.length ? codes : [""]))),
      ...rates.steps,
    ] as const,
    ([variants, found, ...rest]) => ({
      variants: variants.map((r) => ({ ...r, price: Number(r.price), available: Number(r.available) })),
      codes: found.map((c) => ({ ...c, value: Number(c.value) })),
      rates: rates.finish(rest),
    }),
  );
}

const sessionColumns = {
  id: ucpCheckoutSession.id,
  status: ucpCheckoutSession.status,
  lineItems: ucpCheckoutSession.lineItems,
  buyer: ucpCheckoutSession.buyer,
  destination: ucpCheckoutSession.destination,
  discountCodes: ucpCheckoutSession.discountCodes,
  expiresAt: ucpCheckoutSession.expiresAt,
  orderId: ucpCheckoutSession.orderId,
};

/** The session `id` of this store, made by this agent, not expired. */
const theSession = (id: string, agent: string | null) =>
  and(
    eq(ucpCheckoutSession.storeId, CURRENT_STORE),
    eq(ucpCheckoutSession.id, id),
    agent === null ? undefined : eq(ucpCheckoutSession.agentProfile, agent),
    gt(ucpCheckoutSession.expiresAt, sql`now()`),
  );

/** The session `id` of this store and agent, as it was at the start of the unit. */
export function sessionPlan(q: Q, id: string, agent: string | null): Plan<SessionRow | undefined> {
  return plan([q.select(sessionColumns).from(ucpCheckoutSession).where(theSession(id, agent))] as const, ([rows]) => rows[0]);
}

// Operations ----------------------------------------------------------------------------------------------

/** What an operation answers: the session, or why not (the door turns these into the protocol's answers). */
export type SessionAnswer = { ok: true; checkout: UcpCheckout; orderId?: string } | { ok: false; why: "off" | "not_found" | "terminal" | "placed" };

/**
 * A statement the caller's write unit sends first (the door's `Idempotency-Key`, taken by the change's own unit:
 * two requests with one key meet there, and a change that rolls back takes no key).
 */
export type AlsoWrite = (q: Q) => Plan<unknown>;
export const none: AlsoWrite = () => constant(undefined);

/** One write of a session in its own unit, after the caller's key (`also`); answers the write's rows. */
async function writeKeyed<S extends Step>(db: Database, storeId: string, also: AlsoWrite, write: (q: Q) => S): Promise<ResultOf<S>> {
  const { rows } = await sendStoreUnit(db, storeId, (q) => together({ key: also(q), rows: plan([write(q)] as const, ([r]) => r) }), { readOnly: false });
  return rows;
}

const OFF = { ok: false, why: "off" } as const;
const NOT_FOUND = { ok: false, why: "not_found" } as const;

/** Whether the store sells to agents now (`store.agentic_checkout`). */
export async function agenticCheckoutOn(db: Database, storeId: string): Promise<boolean> {
  return (await sendStoreUnit(db, storeId, (q) => storePlan(q)))?.enabled === true;
}

/** A new session from an agent's request: one unit reads the switch and the catalogue, one writes the session. */
export async function createSession(db: Database, storeId: string, agent: string, asked: SessionAsked, also: AlsoWrite = none, host: string | null = null): Promise<SessionAnswer> {
  const { shop, read } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), read: cataloguePlan(q, asked) }));
  if (!shop?.enabled) return OFF;
  const id = crypto.randomUUID();
  const draft = checkoutView({ id, status: "incomplete", expiresAt: new Date(), ...asked }, shop, read);
  const [row] = await writeKeyed(db, storeId, also, (q) =>
    q
      .insert(ucpCheckoutSession)
      .values({ id, storeId: CURRENT_STORE, agentProfile: agent, status: draft.status, host: host?.toLowerCase() ?? null, ...asked })
      .returning({ expiresAt: ucpCheckoutSession.expiresAt }),
  );
  return { ok: true, checkout: { ...draft, expires_at: row!.expiresAt.toISOString() } };
}

/**
 * The session as it is now, priced afresh: the switch and the session in one unit, its catalogue in the next.
 * With no agent (null), the session by its id alone: its `continue_url` page, where the buyer holds the link.
 */
export async function getSession(db: Database, storeId: string, agent: string | null, id: string): Promise<SessionAnswer> {
  const { shop, session, placed } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), session: sessionPlan(q, id, agent), placed: placedOrderPlan(q, id, agent) }));
  if (!shop?.enabled) return OFF;
  if (!session) return NOT_FOUND;
  if (placed) return { ok: true, ...placedView(session, shop, placed) };
  const read = await sendStoreUnit(db, storeId, (q) => cataloguePlan(q, session));
  return { ok: true, checkout: checkoutView(session, shop, read) };
}

/**
 * A full replacement (the specification's update): the switch, the session and the new request's catalogue
 * read in one unit, the session rewritten in the next unless it ended meanwhile. A completed or cancelled
 * session cannot change.
 */
export async function replaceSession(db: Database, storeId: string, agent: string, id: string, asked: SessionAsked, also: AlsoWrite = none): Promise<SessionAnswer> {
  const { shop, session, read } = await sendStoreUnit(db, storeId, (q) => together({ shop: storePlan(q), session: sessionPlan(q, id, agent), read: cataloguePlan(q, asked) }));
  if (!shop?.enabled) return OFF;
  if (!session) return NOT_FOUND;
  if (session.orderId) return { ok: false, why: "placed" };
  if (TERMINAL.includes(session.status)) return { ok: false, why: "terminal" };
  const next = checkoutView({ ...session, ...asked }, shop, read);
  const rows = await writeKeyed(db, storeId, also, (q) =>
    q
      .update(ucpCheckoutSession)
      .set({ ...asked, status: next.status, updatedAt: sql`now()` })
      .where(and(theSession(id, agent), notInArray(ucpCheckoutSession.status, [...TERMINAL]), isNull(ucpCheckoutSession.orderId)))
      .returning({ id: ucpCheckoutSession.id }),
  );
  return rows.length ? { ok: true, checkout: next } : { ok: false, why: "terminal" };
}

/**
 * Cancels a session that has not ended: the switch, the session as it was and the change in one unit (a
 * session completed or cancelled already is refused, as the specification asks), then its catalogue read for
 * the answer.
 */
export async function cancelSession(db: Database, storeId: string, agent: string, id: string, also: AlsoWrite = none): Promise<SessionAnswer> {
  const { shop, before, after } = await sendStoreUnit(
    db,
    storeId,
    (q) =>
      together({
        key: also(q),
        shop: storePlan(q),
        before: sessionPlan(q, id, agent),
        after: plan(
          [
            q
              .update(ucpCheckoutSession)
              .set({ status: "canceled", updatedAt: sql`now()` })
              .where(and(theSession(id, agent), notInArray(ucpCheckoutSession.status, [...TERMINAL]), isNull(ucpCheckoutSession.orderId), inArray(ucpCheckoutSession.storeId, q.select({ id: store.id }).from(store).where(and(eq(store.id, CURRENT_STORE), eq(store.agenticCheckout, true))))))
              .returning(sessionColumns),
          ] as const,
          ([rows]): SessionRow | undefined => rows[0],
        ),
      }),
    { readOnly: false },
  );
  if (!shop?.enabled) return OFF;
  if (!before) return NOT_FOUND;
  if (before.orderId) return cancelPlacedOrder(db, storeId, agent, id, before.orderId);
  if (!after) return { ok: false, why: "terminal" };
  const read = await sendStoreUnit(db, storeId, (q) => cataloguePlan(q, after));
  return { ok: true, checkout: checkoutView(after, shop, read) };
}

/**
 * Cancelling a session whose order waits for the buyer's payment (`requires_escalation`) cancels that order as
 * the merchant's Cancel does (shared/orders/actions.ts: its reservations released, its code's use given back,
 * `order.cancelled`), in the orders' two units: the decision read, then the guarded change with the session
 * marked `canceled`. An order with money in (the session is `completed`) or shipped is not the agent's to
 * cancel: 409. A lost race (the buyer paying at that moment) reads again, up to three times.
 */
const lostRace = (e: unknown): boolean => pgErrorOf(e)?.code === "CR409";

async function cancelPlacedOrder(db: Database, storeId: string, agent: string, id: string, orderId: string): Promise<SessionAnswer> {
  const store = sql`${storeId}::uuid`;
  for (let attempt = 1; ; attempt++) {
    let decision: Cancel;
    try {
      decision = await sendStoreUnit(db, storeId, (q) => cancelReadingPlan(q, store, orderId));
    } catch (e) {
      // Money came in (the session is completed) or the order shipped: not the agent's to cancel.
      if (isAppError(e) && e.status === 409) return { ok: false, why: "terminal" };
      throw e;
    }
    // Cancelled already (by the buyer, the merchant, or this agent before): the session is over.
    if (decision.kind === "as_is") return { ok: false, why: "terminal" };
    try {
      await sendStoreUnit(
        db,
        storeId,
        (q) =>
          together({
            order: cancelPlan(q, store, orderId, "cancelled by the buyer's AI agent (its UCP checkout session)", decision),
            session: plan([q.update(ucpCheckoutSession).set({ status: "canceled", updatedAt: sql`now()` }).where(and(eq(ucpCheckoutSession.storeId, CURRENT_STORE), eq(ucpCheckoutSession.id, id)))] as const, () => undefined),
          }),
        { readOnly: false },
      );
      return getSession(db, storeId, agent, id);
    } catch (e) {
      if (!lostRace(e) || attempt >= 3) throw e;
    }
  }
}
