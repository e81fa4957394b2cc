import { and, desc, eq, gt, isNull, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, unchanged } from "../db/changes";
import { plan, thenPlan, type Plan } from "../db/plan";
import { DELIVERY_STATUSES } from "../db/columns";
import { ORDER_STATUSES, shopOrder, store, ucpCheckoutSession, ucpOrderDelivery, ucpSigningKey } from "../db/schema";
import { AGENT_HOST } from "../orders/statements/order-view";
import { resendOrderUpdateSteps, UCP_ORDER_KINDS } from "../ucp/order-webhooks";
import type { Q } from "../db/steps";
import { newStoreKey, rotateKeyPlan, type NewStoreKey, type UcpSigningConfig } from "../ucp/store-keys";
import { storeProcedure, type Services } from "./define";
import { deliveryOutput } from "./apps";
import * as out from "./outputs";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import { agentsThatBought } from "./statements/sales-channels";

/**
 * Settings → Sales channels (issue 26 item 5; docs/ucp.md): whether shoppers' AI agents may buy from the store
 * over UCP (`store.agentic_checkout`: off, the profile and the endpoints answer 404), the store's UCP signing
 * keys with their rotation, and the agent platforms whose checkout sessions placed orders. The switch and the
 * keys are settings (Owners and Admins, never a token); the agents' orders are orders (orders.read).
 */

/** How many agents the list shows, and how many of each agent's newest orders. */
export const AGENTS_SHOWN = 20;
export const ORDERS_PER_AGENT = 10;

const keyOutput = z.object({
  kid: z.string(),
  createdAt: out.instant,
  /** When a replaced key leaves the profile; null for the key the store signs with. */
  retiresAt: out.instant.nullable(),
  signing: z.boolean(),
});
const settingsOutput = z.object({ agenticCheckout: z.boolean(), keys: z.array(keyOutput) });

export type SalesChannels = { agenticCheckout: boolean; keys: { kid: string; createdAt: Date; retiresAt: Date | null; signing: boolean }[] };

/** The switch and the keys the profile publishes (the signing key first, then replaced ones until they retire). */
function settingsPlan(q: Q, storeId: SQL): Plan<SalesChannels> {
  return plan(
    [
      q.select({ on: store.agenticCheckout }).from(store).where(eq(store.id, storeId)),
      q
        .select({ kid: ucpSigningKey.kid, createdAt: ucpSigningKey.createdAt, retiresAt: ucpSigningKey.retiresAt })
        .from(ucpSigningKey)
        .where(and(eq(ucpSigningKey.storeId, storeId), or(isNull(ucpSigningKey.retiresAt), gt(ucpSigningKey.retiresAt, sql`now()`))))
        .orderBy(sql`${ucpSigningKey.retiresAt} is not null`, desc(ucpSigningKey.createdAt), ucpSigningKey.kid)
        .limit(20),
    ] as const,
    ([[row], keys]) => {
      // The caller's opening already found this store in the same transaction.
      if (!row) throw new Error("salesChannels: store row missing");
      return { agenticCheckout: row.on, keys: keys.map((k) => ({ ...k, signing: k.retiresAt === null })) };
    },
  );
}

function signingConfig(services: Services): UcpSigningConfig {
  const config = services.ucpSigning?.();
  if (!config) throw new Error("UCP signing is not configured at this door (UCP_SIGNING_ROOT_SECRET).");
  return config;
}

/** The store row, locked for the rest of the change: a switch and a rotation of one store run one after the other. */
const lockStore = (q: Q, storeId: SQL) => q.select({ id: store.id }).from(store).where(eq(store.id, storeId)).for("update");

/** Whether the store has a key it signs with. */
const hasSigningKey = (storeId: SQL) => sql`exists (select 1 from ${ucpSigningKey} where ${ucpSigningKey.storeId} = ${storeId} and ${ucpSigningKey.retiresAt} is null)`;

export const getSalesChannels = storeProcedure({
  router: "salesChannels",
  name: "get",
  description:
    "The store's sales channels for AI agents: agenticCheckout (whether shoppers' AI agents may buy over the Universal Commerce Protocol; off, the store's /.well-known/ucp and checkout sessions answer 404) and the store's UCP signing keys (kid, created, and when a replaced key leaves the profile).",
  access: "settings.read",
  mutates: false,
  output: settingsOutput,
  input: z.strictObject({}),
  read: (q, { store: storeId }) => settingsPlan(q, storeId),
});

type Prepared = { on: boolean; hasKey: boolean; key: NewStoreKey | null };

export const updateSalesChannels = storeProcedure({
  router: "salesChannels",
  name: "update",
  description:
    "Turn agentic checkout on or off: on, shoppers' AI agents find the store at /.well-known/ucp on its domains and buy through UCP checkout sessions; off, both answer 404. Turning it on makes the store's first signing key when it has none. Setting the value it has changes nothing. Answers the settings as they now are.",
  access: "settings.write",
  mutates: true,
  output: settingsOutput,
  input: z.strictObject({ agenticCheckout: z.boolean().describe("Whether shoppers' AI agents may buy from the store over UCP") }),
  write: {
    // The switch and whether a signing key exists are read first; turning on without a key makes one (sealed
    // before the unit), which the change stores with the switch, in one unit, or neither.
    prepare: (q, { store: storeId }, input, services) =>
      plan(
        [q.select({ id: store.id, on: store.agenticCheckout, hasKey: sql<boolean>`${hasSigningKey(storeId)}` }).from(store).where(eq(store.id, storeId))] as const,
        ([[row]]): Prepared | Promise<Prepared> => {
          if (!row) throw new Error("salesChannels: store row missing");
          const before = { on: row.on, hasKey: row.hasKey };
          if (!input.agenticCheckout || row.hasKey) return { ...before, key: null };
          return newStoreKey(signingConfig(services), row.id).then((key) => ({ ...before, key }));
        },
      ),
    apply(q, { store: storeId }, input, before: Prepared) {
      const read = settingsPlan(q, storeId);
      if (before.on === input.agenticCheckout && !before.key) return read;
      const key = before.key;
      return thenPlan(
        [
          unchanged(q, sql`exists (select 1 from ${store} where ${store.id} = ${storeId} and ${store.agenticCheckout} = ${before.on} for update) and ${hasSigningKey(storeId)} = ${before.hasKey}`),
          q.update(store).set({ agenticCheckout: input.agenticCheckout, updatedAt: sql`now()` }).where(eq(store.id, storeId)),
          ...(key
            ? [
                q
                  .insert(ucpSigningKey)
                  .values({ storeId, kid: key.kid, publicJwk: { ...key.publicJwk }, privateSealed: key.sealed })
                  .onConflictDoNothing({ target: ucpSigningKey.storeId, where: sql`retires_at is null` }),
              ]
            : []),
          emitStep(q, "store.sales_channels_updated", { agenticCheckout: input.agenticCheckout, ...(key ? { keyMade: key.kid } : {}) }),
        ],
        read,
      );
    },
  },
});

export const rotateSalesChannelKey = storeProcedure({
  router: "salesChannels",
  name: "rotateKey",
  description:
    "Give the store a new UCP signing key: it signs from now on, and the key it replaces stays published in the store's profile for 7 days, so agents still verify what it signed. Makes the first key when the store has none. Answers the settings with the keys as they now are.",
  access: "settings.write",
  mutates: true,
  output: settingsOutput,
  input: z.strictObject({}),
  write: {
    // The store's id names the key's sealing; the key is made and sealed before the unit.
    prepare: (q, { store: storeId }, _input, services) =>
      plan([q.select({ id: store.id }).from(store).where(eq(store.id, storeId))] as const, ([[row]]) => {
        if (!row) throw new Error("salesChannels: store row missing");
        return newStoreKey(signingConfig(services), row.id);
      }),
    apply(q, { store: storeId }, _input, key: NewStoreKey) {
      const rotated = rotateKeyPlan(q, key);
      return thenPlan([lockStore(q, storeId), ...rotated.steps, emitStep(q, "store.ucp_key_rotated", { kid: key.kid })], settingsPlan(q, storeId));
    },
  },
});

const agentOrder = z.object({
  id: out.id,
  number: z.number().int(),
  placedAt: out.instant,
  total: out.minor,
  currency: z.string(),
  paymentStatus: z.string(),
  status: z.enum(ORDER_STATUSES),
});
const agentOutput = z.object({
  profileUrl: z.string(),
  /** The platform's host, as a merchant knows it (`agent.example.com`). */
  host: z.string(),
  orderCount: z.number().int(),
  orders: z.array(agentOrder),
});

export type AgentThatBought = {
  profileUrl: string;
  host: string;
  orderCount: number;
  orders: { id: string; number: number; placedAt: Date; total: number; currency: string; paymentStatus: string; status: (typeof ORDER_STATUSES)[number] }[];
};

export const listAgentsThatBought = storeProcedure({
  router: "salesChannels",
  name: "agents",
  description: `The AI agent platforms whose UCP checkout sessions placed orders in this store, the most recent buyer first (at most ${AGENTS_SHOWN}): each with its profile URL, host, how many orders it placed, and its ${ORDERS_PER_AGENT} newest orders (number, when, total in paise, payment status).`,
  access: "orders.read",
  mutates: false,
  output: z.object({ items: z.array(agentOutput) }),
  input: z.strictObject({}),
  read: (q, { store: storeId }) =>
    plan([agentsThatBought(q, storeId, AGENTS_SHOWN, ORDERS_PER_AGENT)] as const, ([rows]) => {
      const byAgent = new Map<string, AgentThatBought>();
      for (const r of rows) {
        let agent = byAgent.get(r.profileUrl);
        if (!agent) byAgent.set(r.profileUrl, (agent = { profileUrl: r.profileUrl, host: r.host ?? r.profileUrl, orderCount: r.orderCount, orders: [] }));
        agent.orders.push({ id: r.orderId, number: r.number, placedAt: r.placedAt, total: Number(r.total), currency: r.currency, paymentStatus: r.paymentStatus, status: r.status });
      }
      return { items: [...byAgent.values()] };
    }),
});

/** One order update to an agent's platform (docs/ucp.md "Order updates to the agent"), as the log lists it. */
const orderUpdateOutput = deliveryOutput.omit({ eventId: true, round: true }).extend({
  orderId: out.id,
  orderNumber: z.number().int(),
  eventKind: z.enum(UCP_ORDER_KINDS),
  /** The agent platform's host (its profile URL's); null when the session is gone. */
  host: z.string().nullable(),
});
type Instants = "lastAttemptAt" | "nextAttemptAt" | "deliveredAt" | "createdAt";
/** An order update as the procedures read it (instants as Dates). */
export type OrderUpdate = Omit<z.infer<typeof orderUpdateOutput>, Instants> & { lastAttemptAt: Date | null; nextAttemptAt: Date | null; deliveredAt: Date | null; createdAt: Date };

const orderUpdateColumns = {
  id: ucpOrderDelivery.id,
  orderId: ucpOrderDelivery.orderId,
  orderNumber: shopOrder.number,
  eventKind: sql<OrderUpdate["eventKind"]>`${ucpOrderDelivery.eventKind}`,
  host: sql<string | null>`${AGENT_HOST(sql`${ucpCheckoutSession.agentProfile}`)}`,
  status: ucpOrderDelivery.status,
  attempts: ucpOrderDelivery.attempts,
  lastStatus: ucpOrderDelivery.lastStatus,
  lastError: ucpOrderDelivery.lastError,
  lastAttemptAt: ucpOrderDelivery.lastAttemptAt,
  nextAttemptAt: ucpOrderDelivery.nextAttemptAt,
  deliveredAt: ucpOrderDelivery.deliveredAt,
  createdAt: ucpOrderDelivery.createdAt,
};

/** The store's order updates with their order and the session that placed it (its agent's host). */
const orderUpdates = (q: Q, where: SQL | undefined) =>
  q
    .select(orderUpdateColumns)
    .from(ucpOrderDelivery)
    .innerJoin(shopOrder, and(eq(shopOrder.storeId, ucpOrderDelivery.storeId), eq(shopOrder.id, ucpOrderDelivery.orderId)))
    .leftJoin(ucpCheckoutSession, and(eq(ucpCheckoutSession.storeId, ucpOrderDelivery.storeId), eq(ucpCheckoutSession.orderId, ucpOrderDelivery.orderId)))
    .where(where);

export const listOrderUpdates = storeProcedure({
  router: "salesChannels",
  name: "orderUpdates",
  description:
    "The store's order updates to AI agent platforms (the signed webhooks sent when an order an agent placed is paid, shipped, delivered, cancelled or refunded), newest first, paged: each with its order number, the event, the agent platform's host, status (pending: waiting for its next try; delivered: the platform answered 2xx; failed: no try is left), tries, the last HTTP status or error, and when the last and next tries are. Filter by status.",
  access: "settings.read",
  mutates: false,
  output: out.paged(orderUpdateOutput),
  input: z.strictObject({ status: z.enum(DELIVERY_STATUSES).optional(), ...pagingInput }),
  read(q, { store: storeId }, input) {
    const where = and(eq(ucpOrderDelivery.storeId, storeId), input.status ? eq(ucpOrderDelivery.status, input.status) : undefined);
    return pagePlan(
      orderUpdates(q, where).orderBy(desc(ucpOrderDelivery.createdAt), desc(ucpOrderDelivery.id)).limit(input.pageSize).offset(offsetOf(input)),
      q.select(countColumn()).from(ucpOrderDelivery).where(where),
      input,
    );
  },
});

export const resendOrderUpdate = storeProcedure({
  router: "salesChannels",
  name: "resendOrderUpdate",
  description:
    "Send one order update to its agent platform again, as a new round of tries (a failed or delivered one; one pending and not tried yet is left as it is, one being tried is a conflict). The order is sent as it stands when the try is made, under the same Webhook-Id. Answers the update, now pending.",
  access: "settings.write",
  mutates: true,
  output: orderUpdateOutput,
  input: z.strictObject({ deliveryId: z.uuid().describe("The order update's id (salesChannels.orderUpdates)") }),
  write: {
    apply: (q, { store: storeId }, input) =>
      thenPlan(
        resendOrderUpdateSteps(q, input.deliveryId),
        plan([orderUpdates(q, and(eq(ucpOrderDelivery.storeId, storeId), eq(ucpOrderDelivery.id, input.deliveryId)))] as const, ([[row]]) => row!),
      ),
  },
});

export const salesChannelProcedures = [getSalesChannels, updateSalesChannels, rotateSalesChannelKey, listAgentsThatBought, listOrderUpdates, resendOrderUpdate];
