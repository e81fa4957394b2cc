import { describe, expect, it } from "vitest";
import doc from "../../docs/order-status.md?raw";
import {
  ARRIVED_FULFILLMENT,
  ATTEMPT_RANK,
  ATTEMPT_STATUSES,
  decideAttemptStatus,
  decideShipmentStatus,
  FULFILLMENT_STATUSES,
  ORDER_STATUSES,
  OrderStatusError,
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
} from "./status";
import { mulberry32 } from "../../test/prng";

// ---- helpers ------------------------------------------------------------------------------------------

/** Seeded choices over mulberry32 (test/prng.ts), so a failing run can be replayed from its seed. */
function prng(seed: number) {
  const next = mulberry32(seed);
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  const shuffle = <T>(list: readonly T[]): T[] => {
    const out = [...list];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j] as T, out[i] as T];
    }
    return out;
  };
  return { int, pick, shuffle };
}

const settle = (from: AttemptStatus, reports: readonly AttemptStatus[]): AttemptStatus =>
  reports.reduce((now, requested) => {
    const d = decideAttemptStatus(now, requested);
    return d.apply ? d.to : now;
  }, from);

const facts = (over: Partial<OrderFacts>): OrderFacts => ({
  status: "open",
  total: 1000,
  attempts: [],
  refunds: [],
  parcels: [{ id: "a" }, { id: "b" }],
  shipments: [],
  ...over,
});

const problemOf = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (e) {
    if (e instanceof OrderStatusError) return e.problem;
    throw e;
  }
  return undefined;
};

// ---- payment attempts ---------------------------------------------------------------------------------

describe("payment attempt transitions", () => {
  // Rows: current status. Columns: requested status, in rank order. → moves, = same, b backwards, t terminal.
  const columns = ["created", "pending", "authorized", "failed", "captured", "refunded"] as const;
  const matrix: Record<AttemptStatus, string> = {
    created: "= → → → → →",
    pending: "b = → → → →",
    authorized: "b b = → → →",
    failed: "t t t = → →",
    captured: "b b b b = →",
    refunded: "t t t t t =",
  };
  const rows = ATTEMPT_STATUSES.flatMap((from) =>
    matrix[from].split(" ").map((cell, i) => ({ from, to: columns[i] as AttemptStatus, cell })),
  );

  it("the table covers every pair, and ATTEMPT_RANK orders the states as its columns", () => {
    expect(rows).toHaveLength(36);
    expect([...ATTEMPT_STATUSES].sort((x, y) => ATTEMPT_RANK[x] - ATTEMPT_RANK[y])).toEqual(columns);
  });

  it.each(rows)("$from → $to: $cell", ({ from, to, cell }) => {
    const expected = {
      "→": { apply: true, to },
      "=": { apply: false, reason: "same" },
      b: { apply: false, reason: "backwards" },
      t: { apply: false, reason: "terminal" },
    }[cell];
    expect(decideAttemptStatus(from, to)).toEqual(expected);
  });

  it("docs/order-status.md shows the same table", () => {
    const word: Record<string, string> = { "→": "→", "=": "same", b: "backwards", t: "terminal" };
    const shown = doc.split("\n").filter((line) => columns.some((from) => line.startsWith(`| ${from} |`)));
    expect(shown.map((line) => line.split("|").map((cell) => cell.trim()).slice(1, -1))).toEqual(
      columns.map((from) => [from, ...matrix[from].split(" ").map((cell) => word[cell])]),
    );
    expect(doc).toContain(`| Current ↓ / reported → | ${columns.join(" | ")} |`);
  });

  it("refuses a status it does not know", () => {
    expect(problemOf(() => decideAttemptStatus("created", "settled" as AttemptStatus))).toBe("unknown_status");
    expect(problemOf(() => decideAttemptStatus("toString" as AttemptStatus, "captured"))).toBe("unknown_status");
  });

  it("two racing reports end in the same state in either order, and a repeat changes nothing (all triples)", () => {
    for (const from of ATTEMPT_STATUSES) {
      for (const a of ATTEMPT_STATUSES) {
        expect(settle(from, [a, a])).toBe(settle(from, [a]));
        for (const b of ATTEMPT_STATUSES) expect(settle(from, [a, b]), `${from}: ${a}, ${b}`).toBe(settle(from, [b, a]));
      }
    }
  });

  it("random report sequences: never backwards, money never forgotten, order and repeats do not matter", () => {
    for (let seed = 1; seed <= 500; seed++) {
      const r = prng(seed);
      const from = r.pick(ATTEMPT_STATUSES);
      const reports = Array.from({ length: r.int(12) }, () => r.pick(ATTEMPT_STATUSES));
      let now = from;
      for (const requested of reports) {
        const next = settle(now, [requested]);
        expect(ATTEMPT_RANK[next], `seed ${seed}`).toBeGreaterThanOrEqual(ATTEMPT_RANK[now]);
        if (ATTEMPT_RANK[now] >= ATTEMPT_RANK.captured) expect(["captured", "refunded"]).toContain(next);
        now = next;
      }
      const highest = [from, ...reports].reduce((x, y) => (ATTEMPT_RANK[y] > ATTEMPT_RANK[x] ? y : x));
      expect(now, `seed ${seed}`).toBe(highest);
      expect(settle(from, r.shuffle(reports)), `seed ${seed}`).toBe(now);
      expect(settle(from, reports.flatMap((s) => [s, s])), `seed ${seed}`).toBe(now);
    }
  });
});

// ---- recompute: tables ----------------------------------------------------------------------------------

const at = (status: AttemptStatus, amount = 1000) => ({ status, amount });
const cap = (amount: number) => at("captured", amount);
const back = (...amounts: number[]) => amounts.map((amount) => ({ amount }));

describe("payment_status", () => {
  it.each<[string, PaymentStatus, Partial<OrderFacts>]>([
    ["no attempt", "unpaid", {}],
    ["an attempt not yet sent, and a failed one", "unpaid", { attempts: [at("created"), at("failed")] }],
    ["a payment under way", "pending", { attempts: [at("failed"), at("pending")] }],
    ["authorized beats pending", "authorized", { attempts: [at("pending"), at("authorized")] }],
    ["captured the total", "paid", { attempts: [cap(1000)] }],
    ["captured twice (a double payment)", "paid", { attempts: [cap(1000), cap(1000)] }],
    ["deposit and balance", "paid", { attempts: [cap(300), cap(700)] }],
    ["a deposit only", "partially_paid", { attempts: [cap(300), at("authorized", 700)] }],
    ["a deposit, partly refunded", "partially_paid", { attempts: [cap(300)], refunds: back(100) }],
    ["nothing owed on a free order", "paid", { total: 0, attempts: [at("pending", 0)] }],
    ["paid, part refunded", "partially_refunded", { attempts: [cap(1000)], refunds: back(200, 100) }],
    ["a double payment's surplus refunded", "paid", { attempts: [cap(1000), cap(1000)], refunds: back(1000) }],
    ["all captured money refunded", "refunded", { attempts: [cap(1000)], refunds: back(600, 400) }],
    ["a deposit refunded in full", "refunded", { attempts: [cap(300)], refunds: back(300) }],
    ["an attempt at refunded still counts as captured", "refunded", { attempts: [at("refunded")], refunds: back(1000) }],
    ["a refunded attempt, refund rows partial", "partially_refunded", { attempts: [at("refunded")], refunds: back(400) }],
  ])("%s → %s", (_name, expected, over) => {
    expect(recomputeOrder(facts(over)).paymentStatus).toBe(expected);
  });

  it.each<[string, string, Partial<OrderFacts>]>([
    ["refunds past captures", "refunds_exceed_captures", { attempts: [cap(500), at("authorized", 500)], refunds: back(501) }],
    ["a refund with nothing captured", "refunds_exceed_captures", { refunds: back(1) }],
    ["a negative total", "bad_amount", { total: -1 }],
    ["a fractional attempt amount", "bad_amount", { attempts: [cap(10.5)] }],
    ["a negative refund", "bad_amount", { attempts: [cap(1000)], refunds: back(-5) }],
    ["an unknown attempt status", "unknown_status", { attempts: [at("settled" as AttemptStatus)] }],
    ["an unknown order status", "unknown_status", { status: "placed" as OrderFacts["status"] }],
  ])("invalid: %s → %s", (_name, problem, over) => {
    expect(problemOf(() => recomputeOrder(facts(over)))).toBe(problem);
  });
});

const ship = (a?: ShipmentStatus, b?: ShipmentStatus) => [
  ...(a ? [{ parcelId: "a", status: a }] : []),
  ...(b ? [{ parcelId: "b", status: b }] : []),
];

describe("fulfillment_status", () => {
  it.each<[ShipmentStatus[], ReturnType<typeof parcelStateOf>]>([
    [[], "unshipped"],
    [["cancelled"], "unshipped"],
    [["pending"], "shipped"],
    [["cancelled", "in_transit"], "shipped"],
    [["delivered"], "delivered"],
    [["rto_initiated"], "rto_initiated"],
    [["rto_delivered"], "rto_delivered"],
    [["rto_delivered", "pending"], "shipped"],
    [["rto_initiated", "in_transit"], "shipped"],
    [["rto_delivered", "rto_initiated"], "rto_initiated"],
    [["rto_initiated", "delivered"], "delivered"],
  ])("a parcel with shipments %j is %s", (statuses, expected) => {
    expect(parcelStateOf(statuses)).toBe(expected);
    expect(parcelStateOf([...statuses].reverse())).toBe(expected);
  });

  it.each<[string, FulfillmentStatus, OrderFacts["shipments"]]>([
    ["no parcel shipped", "unfulfilled", ship()],
    ["only cancelled shipments", "unfulfilled", ship("cancelled")],
    ["one of two parcels delivered", "partially_fulfilled", ship("delivered")],
    ["one of two parcels in RTO", "partially_fulfilled", ship("rto_initiated")],
    ["both on their way", "fulfilled", ship("pending", "in_transit")],
    ["one delivered, one on its way", "fulfilled", ship("delivered", "in_transit")],
    ["one coming back, one on its way", "rto_initiated", ship("rto_initiated", "in_transit")],
    ["one coming back, one delivered", "rto_initiated", ship("rto_initiated", "delivered")],
    ["both delivered", "delivered", ship("delivered", "delivered")],
    ["both back at origin", "rto_delivered", ship("rto_delivered", "rto_delivered")],
    ["one delivered, one back at origin", "rto_delivered", ship("delivered", "rto_delivered")],
  ])("%s → %s", (_name, expected, shipments) => {
    expect(recomputeOrder(facts({ shipments })).fulfillmentStatus).toBe(expected);
  });

  it.each<[string, string, Partial<OrderFacts>]>([
    ["no parcels", "no_parcels", { parcels: [] }],
    ["a parcel listed twice", "duplicate_parcel", { parcels: [{ id: "a" }, { id: "a" }] }],
    ["a shipment of another order's parcel", "unknown_parcel", { shipments: [{ parcelId: "z", status: "pending" }] }],
    ["an unknown shipment status", "unknown_status", { shipments: ship("lost" as ShipmentStatus) }],
  ])("invalid: %s → %s", (_name, problem, over) => {
    expect(problemOf(() => recomputeOrder(facts(over)))).toBe(problem);
  });
});

describe("order status", () => {
  // One set of rows per payment_status and per fulfillment_status; the table below crosses them all.
  const money: Record<PaymentStatus, Partial<OrderFacts>> = {
    unpaid: { attempts: [at("failed")] },
    pending: { attempts: [at("pending")] },
    authorized: { attempts: [at("authorized")] },
    partially_paid: { attempts: [cap(400)] },
    paid: { attempts: [cap(1000)] },
    partially_refunded: { attempts: [cap(1000)], refunds: back(300) },
    refunded: { attempts: [cap(1000)], refunds: back(1000) },
  };
  const parcels: Record<FulfillmentStatus, OrderFacts["shipments"]> = {
    unfulfilled: ship(),
    partially_fulfilled: ship("delivered"),
    fulfilled: ship("in_transit", "delivered"),
    rto_initiated: ship("rto_initiated", "delivered"),
    delivered: ship("delivered", "delivered"),
    rto_delivered: ship("rto_delivered", "delivered"),
  };
  const completing = new Set([
    "paid/delivered",
    "paid/rto_delivered",
    "partially_refunded/delivered",
    "partially_refunded/rto_delivered",
    "refunded/delivered",
    "refunded/rto_delivered",
  ]);
  const cells = PAYMENT_STATUSES.flatMap((p) =>
    FULFILLMENT_STATUSES.flatMap((f) => ORDER_STATUSES.map((s) => ({ p, f, s }))),
  );

  it.each(cells)("$s order, $p, $f", ({ p, f, s }) => {
    const got = recomputeOrder(facts({ ...money[p], shipments: parcels[f], status: s }));
    const closed = s === "cancelled" || s === "expired";
    expect(got).toEqual({
      paymentStatus: p,
      fulfillmentStatus: f,
      status: closed ? s : completing.has(`${p}/${f}`) ? "completed" : "open",
    });
  });

  it("a completed order whose delivery is corrected back to in transit reopens", () => {
    const done = recomputeOrder(facts({ ...money.paid, shipments: parcels.delivered, status: "completed" }));
    expect(done.status).toBe("completed");
    const corrected = ship("in_transit", "delivered");
    expect(recomputeOrder(facts({ ...money.paid, shipments: corrected, status: "completed" })).status).toBe("open");
  });

  it("a payment that lands after expiry shows as paid on an order that stays expired", () => {
    expect(recomputeOrder(facts({ ...money.paid, status: "expired" }))).toEqual({
      paymentStatus: "paid",
      fulfillmentStatus: "unfulfilled",
      status: "expired",
    });
  });
});

// ---- recompute: random sequences of rows ------------------------------------------------------------

// Where a courier can take a shipment next; delivered → in_transit is a corrected status.
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
