import { describe, expect, it } from "vitest";
import {
  ARRIVED_FULFILLMENT,
  ATTEMPT_RANK,
  ATTEMPT_STATUSES,
  decideAttemptStatus,
  decideShipmentStatus,
  FULFILLMENT_STATUSES,
  PAYMENT_STATUSES,
  parcelStateOf,
  recomputeOrder,
  SETTLED_PAYMENT,
  SHIPMENT_STATUSES,
  type AttemptStatus,
  type FulfillmentStatus,
  type OrderFacts,
  type PaymentStatus,
  type ShipmentStatus,
} from "../rules/status";
import { at, problemOf, prng } from "../../test/order-status";

/** Order status over random histories and shipment moves (property tests; the tables are in ./status.test.ts). */

const COURIER: Record<ShipmentStatus, readonly ShipmentStatus[]> = {
  pending: ["in_transit", "cancelled"],
  in_transit: ["delivered", "rto_initiated"],
  delivered: ["in_transit"],
  rto_initiated: ["rto_delivered"],
  rto_delivered: [],
  cancelled: [],
};

const capturedOf = (f: Pick<OrderFacts, "attempts">): number =>
  f.attempts.filter((a) => ATTEMPT_RANK[a.status] >= ATTEMPT_RANK.captured).reduce((sum, a) => sum + a.amount, 0);
const refundedOf = (f: Pick<OrderFacts, "refunds">): number => f.refunds.reduce((sum, x) => sum + x.amount, 0);

/** A valid history: attempts moved by the status routine, refunds within what was captured, courier moves. */
function* history(seed: number): Generator<OrderFacts> {
  const r = prng(seed);
  const total = r.pick([0, 1, 999, 1000, 250_000]);
  const parcels = Array.from({ length: 1 + r.int(3) }, (_, i) => ({ id: `p${i}` }));
  let status: OrderFacts["status"] = "open";
  const attempts: { status: AttemptStatus; amount: number }[] = [];
  const refunds: { amount: number }[] = [];
  const shipments: { parcelId: string; status: ShipmentStatus }[] = [];
  for (let step = 0; step < 25; step++) {
    const roll = r.int(100);
    const refundable = capturedOf({ attempts }) - refundedOf({ refunds });
    const attempt = attempts.length > 0 ? r.pick(attempts) : undefined;
    const shipment = shipments.length > 0 ? r.pick(shipments) : undefined;
    if (roll < 15 || !attempt) attempts.push(at("created", r.pick([total, Math.ceil(total / 3), 1 + r.int(total + 1)])));
    else if (roll < 45) {
      const d = decideAttemptStatus(attempt.status, r.pick(ATTEMPT_STATUSES));
      if (d.apply) attempt.status = d.to;
    } else if (roll < 55 && refundable > 0) refunds.push({ amount: 1 + r.int(refundable) });
    else if (roll < 70 || !shipment) shipments.push({ parcelId: r.pick(parcels).id, status: "pending" });
    else if (roll < 97) shipment.status = r.pick(COURIER[shipment.status]) ?? shipment.status;
    else if (status === "open" || status === "completed") status = r.pick(["cancelled", "expired"] as const);
    const facts: OrderFacts = { status, total, attempts, refunds, parcels, shipments };
    yield structuredClone(facts);
    const next = recomputeOrder(facts).status;
    if (next === "open" || next === "completed") status = next;
  }
}

describe("recompute over random histories", () => {
  const seeds = Array.from({ length: 300 }, (_, i) => i + 1);

  it("never throws on a valid history; same rows in any order give the same answer; open and completed are derived", () => {
    for (const seed of seeds) {
      const r = prng(seed * 7919);
      for (const f of history(seed)) {
        const got = recomputeOrder(f);
        const { attempts, refunds, parcels, shipments } = f;
        const shuffled = { ...f, attempts: r.shuffle(attempts), refunds: r.shuffle(refunds), parcels: r.shuffle(parcels) };
        expect(recomputeOrder({ ...shuffled, shipments: r.shuffle(shipments) }), `seed ${seed}`).toEqual(got);
        expect(recomputeOrder(structuredClone(f)), `seed ${seed}`).toEqual(got);
        if (f.status === "open" || f.status === "completed") {
          const other = f.status === "open" ? "completed" : "open";
          expect(recomputeOrder({ ...f, status: other }), `seed ${seed}`).toEqual(got);
        } else expect(got.status, `seed ${seed}`).toBe(f.status);
      }
    }
  });

  it("completed means settled money and every parcel at its end; and the reverse for a live order", () => {
    let completed = 0;
    const seen = new Set<FulfillmentStatus>();
    for (const seed of seeds) {
      for (const f of history(seed)) {
        const got = recomputeOrder(f);
        const settled = SETTLED_PAYMENT.includes(got.paymentStatus);
        const ended = f.parcels.every((p) => {
          const state = parcelStateOf(f.shipments.filter((s) => s.parcelId === p.id).map((s) => s.status));
          return state === "delivered" || state === "rto_delivered";
        });
        expect(ARRIVED_FULFILLMENT.includes(got.fulfillmentStatus), `seed ${seed}`).toBe(ended);
        seen.add(got.fulfillmentStatus);
        if (got.status === "completed") completed++;
        if (f.status !== "open" && f.status !== "completed") continue;
        expect(got.status === "completed", `seed ${seed}`).toBe(settled && ended);
      }
    }
    expect(completed).toBeGreaterThan(20);
    expect([...seen].sort()).toEqual([...FULFILLMENT_STATUSES].sort());
  });

  it("payment_status agrees with the money; one refund past the captures is refused", () => {
    const seen = new Set<PaymentStatus>();
    for (const seed of seeds) {
      for (const f of history(seed)) {
        const captured = capturedOf(f);
        const refunded = refundedOf(f);
        const p = recomputeOrder(f).paymentStatus;
        seen.add(p);
        expect(refunded, `seed ${seed}`).toBeLessThanOrEqual(captured);
        if (["unpaid", "pending", "authorized"].includes(p)) expect(captured).toBe(0);
        if (p === "partially_paid") expect(captured > 0 && captured < f.total).toBe(true);
        if (p === "paid") expect(captured - refunded).toBeGreaterThanOrEqual(f.total);
        if (p === "partially_refunded") expect(captured >= f.total && captured - refunded < f.total).toBe(true);
        if (p === "refunded") expect(captured > 0 && refunded === captured).toBe(true);
        const over = { ...f, refunds: [...f.refunds, { amount: captured - refunded + 1 }] };
        expect(problemOf(() => recomputeOrder(over)), `seed ${seed}`).toBe("refunds_exceed_captures");
      }
    }
    expect([...seen].sort()).toEqual([...PAYMENT_STATUSES].sort());
  });
});

// ---- shipments ------------------------------------------------------------------------------------------

describe("shipment transitions", () => {
  const allowed: [ShipmentStatus, ShipmentStatus[]][] = [
    ["pending", ["in_transit", "delivered", "rto_initiated", "rto_delivered", "cancelled"]],
    ["in_transit", ["delivered", "rto_initiated", "rto_delivered"]],
    ["rto_initiated", ["rto_delivered", "delivered"]],
    ["delivered", []],
    ["rto_delivered", []],
    ["cancelled", []],
  ];

  it("moves only along the documented roads; final states stay; a repeat is 'same'", () => {
    for (const [from, to] of allowed) {
      for (const requested of SHIPMENT_STATUSES) {
        const d = decideShipmentStatus(from, requested);
        if (to.includes(requested)) expect(d, `${from} → ${requested}`).toEqual({ apply: true, to: requested });
        else if (requested === from) expect(d).toEqual({ apply: false, reason: "same" });
        else expect(d, `${from} → ${requested}`).toEqual({ apply: false, reason: to.length === 0 ? "terminal" : "backwards" });
      }
    }
    expect(problemOf(() => decideShipmentStatus("pending", "lost" as ShipmentStatus))).toBe("unknown_status");
  });

  it("random report sequences: a picked-up parcel is never cancelled, a final state never changes, repeats change nothing", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const r = prng(seed);
      let now: ShipmentStatus = "pending";
      const reports = Array.from({ length: r.int(10) }, () => r.pick(SHIPMENT_STATUSES));
      for (const requested of reports) {
        const d = decideShipmentStatus(now, requested);
        const next: ShipmentStatus = d.apply ? d.to : now;
        if (now !== "pending" && now !== "cancelled") expect(next, `seed ${seed}`).not.toBe("cancelled");
        if (["delivered", "rto_delivered", "cancelled"].includes(now)) expect(next).toBe(now);
        const again = decideShipmentStatus(next, requested);
        if (next === requested) expect(again.apply).toBe(false);
        now = next;
      }
    }
  });
});
