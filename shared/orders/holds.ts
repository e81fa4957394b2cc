import { eq, type SQL } from "drizzle-orm";
import { sha256Hex } from "../core/tokens";
import { plan, type Plan } from "../db/plan";
import { store as storeTable } from "../db/schema";
import { sql, type Q, type Step } from "../db/steps";
import { AppError } from "../core/errors";
import { clientAddress } from "../limits/address";
import { holdLimit, lockHoldKeys } from "./statements/holds";

/**
 * Unpaid holds (docs/order-status.md, "Payment windows and expiry"; decision 0020). A placed order holds
 * its stock until it is paid or its window closes, so who may hold and for how long is bounded:
 *
 * - bank transfer is offered only where the store turned it on (off for a new store);
 * - a transfer order holds for the store's `transfer_hold_hours` (default 72, 1 to 168), a gateway order
 *   for 30 minutes;
 * - one email, and one buyer network, hold at most UNPAID_HOLDS_PER_BUYER open unpaid orders per store,
 *   counted by checkout's own change (no round trip more) under a lock per email and per network, so
 *   racing checkouts cannot all pass the count.
 */
export const UNPAID_HOLDS_PER_BUYER = 3;

/** A transfer order's hold, in hours: the store's setting, its default and bounds. */
export const TRANSFER_HOLD_HOURS = { default: 72, min: 1, max: 168 } as const;
/** A gateway order waits this long for its payment (the gateway's hosted page and a retry or two). */
export const GATEWAY_HOLD_MS = 30 * 60_000;

/** How long an order placed with `method` holds its stock, given the store's transfer hold. */
export function holdWindowMs(method: "gateway" | "manual_transfer", transferHoldHours: number): number {
  return method === "gateway" ? GATEWAY_HOLD_MS : transferHoldHours * 3_600_000;
}

/** The store's settings that shape a checkout's payment: what it offers and how long it holds. */
export interface PaymentSettings {
  manualTransfer: boolean;
  transferHoldHours: number;
  depositPercent: number;
}

/** The store's payment settings, read in one statement (the checkout page's unit, the product page's). */
export function paymentSettingsPlan(q: Q, store: SQL): Plan<PaymentSettings> {
  return plan(
    [
      q
        .select({ manual_transfer: storeTable.manualTransferEnabled, hold_hours: storeTable.transferHoldHours, deposit_percent: storeTable.preorderDepositPercent })
        .from(storeTable)
        .where(eq(storeTable.id, store)),
    ] as const,
    ([[row]]) => ({
      manualTransfer: row?.manual_transfer ?? false,
      transferHoldHours: row?.hold_hours ?? TRANSFER_HOLD_HOURS.default,
      depositPercent: row?.deposit_percent ?? 100,
    }),
  );
}

export const transferRefused = () =>
  new AppError("BAD_REQUEST", "This store does not take bank transfers: choose to pay online.", {
    reason: "manual_transfer_off",
    issues: [{ path: "paymentMethod", message: "bank transfer is not offered by this store" }],
  });

/**
 * What the per-network limit counts an order under: SHA-256 of the store and the buyer's network (the
 * IPv4 address, or the IPv6 /64, as the limiters count it), or null when the request names no address
 * (a local run). Only the hash is kept: the limit needs equality, not the address (decision 0020).
 */
export async function buyerNetworkHash(storeId: string, ipHeader: string | null | undefined): Promise<string | null> {
  const network = clientAddress(ipHeader);
  return network === "unknown" ? null : sha256Hex(`${storeId}|${network}`);
}

/**
 * The checkout change's statements that bound unpaid holds: the email's and the network's locks (in that
 * order, so two checkouts never wait on each other in a cycle), then one count each, which stops the unit
 * with 409 `unpaid_orders_limit` when the buyer already holds UNPAID_HOLDS_PER_BUYER. A count after the
 * lock sees every order committed by a checkout that held it first.
 */
export function holdLimitSteps(q: Q, store: SQL, buyer: { storeId: string; email: string; networkHash: string | null; now: Date }): Step[] {
  const email = buyer.email.toLowerCase();
  const keys = [`hold:${buyer.storeId}:email:${email}`, ...(buyer.networkHash ? [`hold:${buyer.storeId}:network:${buyer.networkHash}`] : [])];
  const count = (who: SQL, words: string, issue: { path: string; message: string }) =>
    holdLimit(q, store, {
      who,
      limit: UNPAID_HOLDS_PER_BUYER,
      now: buyer.now,
      words: `${words} already has ${UNPAID_HOLDS_PER_BUYER} orders waiting for payment at this store: pay one of them (its link is in the order email), or try again when the first is released `,
      issue,
    });
  return [
    lockHoldKeys(q, keys),
    count(sql`email_lower = ${email}`, "This email address", { path: "email", message: `has ${UNPAID_HOLDS_PER_BUYER} orders waiting for payment` }),
    ...(buyer.networkHash
      ? [count(sql`buyer_network_hash = ${buyer.networkHash}`, "Your network", { path: "", message: `${UNPAID_HOLDS_PER_BUYER} orders from this network are waiting for payment` })]
      : []),
  ];
}
