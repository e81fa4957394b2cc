import { describe, expect, it } from "vitest";
import doc from "../../docs/order-status.md?raw";
import {
  ATTEMPT_RANK,
  ATTEMPT_STATUSES,
  decideAttemptStatus,
  FULFILLMENT_STATUSES,
  ORDER_STATUSES,
  PAYMENT_STATUSES,
  parcelStateOf,
  recomputeOrder,
  type AttemptStatus,
  type FulfillmentStatus,
  type OrderFacts,
  type PaymentStatus,
  type ShipmentStatus,
} from "./status";
import { at, problemOf, prng } from "../../test/order-status";

// ---- helpers ------------------------------------------------------------------------------------------

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
