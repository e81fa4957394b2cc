import { describe, expect, it } from "vitest";
import { planReservation, sumDemand, type Demand, type StockRow } from "./reservation";

const row = (locationId: string, variantId: string, available: number, priority = 100): StockRow => ({
  locationId,
  locationName: locationId,
  priority,
  variantId,
  available,
});
const want = (variantId: string, quantity: number, preorder = false): Demand => ({ variantId, quantity, preorder });

describe("reservation plan", () => {
  it("two lines of one variant count together (the Medusa #16502 shape)", () => {
    expect(sumDemand([want("v1", 2), want("v1", 3)])).toEqual([want("v1", 5)]);
    const plan = planReservation([want("v1", 3), want("v1", 3)], [row("A", "v1", 5)]);
    expect(plan).toEqual({ ok: false, short: [{ variantId: "v1", requested: 6, available: 5 }] });
  });

  it("names every short variant with what is available over all online locations", () => {
    const plan = planReservation([want("v1", 4), want("v2", 1), want("v3", 1)], [row("A", "v1", 1), row("B", "v1", 2), row("A", "v3", 1)]);
    expect(plan).toEqual({
      ok: false,
      short: [
        { variantId: "v1", requested: 4, available: 3 },
        { variantId: "v2", requested: 1, available: 0 },
      ],
    });
  });

  it("fewest parcels first: one location that has it all wins over the higher-priority one that has part", () => {
    const stock = [row("A", "v1", 5, 1), row("A", "v2", 0, 1), row("B", "v1", 5, 2), row("B", "v2", 5, 2)];
    expect(planReservation([want("v1", 2), want("v2", 1)], stock)).toEqual({
      ok: true,
      parcels: [{ locationId: "B", lines: [{ variantId: "v1", quantity: 2, reserved: 2 }, { variantId: "v2", quantity: 1, reserved: 1 }] }],
    });
  });

  it("then priority: of two locations that could each ship it all, the lower priority number", () => {
    const stock = [row("Z", "v1", 5, 1), row("A", "v1", 5, 9)];
    expect(planReservation([want("v1", 2)], stock)).toEqual({ ok: true, parcels: [{ locationId: "Z", lines: [{ variantId: "v1", quantity: 2, reserved: 2 }] }] });
  });

  it("splits a variant across locations only when no single one can cover it", () => {
    const stock = [row("A", "v1", 2, 1), row("B", "v1", 2, 2)];
    expect(planReservation([want("v1", 3)], stock)).toEqual({
      ok: true,
      parcels: [
        { locationId: "A", lines: [{ variantId: "v1", quantity: 2, reserved: 2 }] },
        { locationId: "B", lines: [{ variantId: "v1", quantity: 1, reserved: 1 }] },
      ],
    });
  });

  it("pre-order: takes what is on hand and backorders the rest, reserving nothing beyond stock", () => {
    const plan = planReservation([want("p", 5, true)], [row("A", "p", 2)]);
    expect(plan).toEqual({ ok: true, parcels: [{ locationId: "A", lines: [{ variantId: "p", quantity: 5, reserved: 2 }] }] });
    const none = planReservation([want("p", 3, true), want("v1", 1)], [row("A", "p", 0), row("B", "v1", 1)]);
    // Nothing on hand: the backordered units join the parcel already going out rather than make another.
    expect(none).toEqual({
      ok: true,
      parcels: [{ locationId: "B", lines: [{ variantId: "p", quantity: 3, reserved: 0 }, { variantId: "v1", quantity: 1, reserved: 1 }] }],
    });
  });

  it("property: never reserves more than available, covers the demand exactly, and is minimal for small stores", () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 500; round++) {
      const locations = Array.from({ length: 1 + rand(5) }, (_, i) => `L${i}`);
      const variants = Array.from({ length: 1 + rand(4) }, (_, i) => `v${i}`);
      const stock = locations.flatMap((l) => variants.filter(() => rand(3) > 0).map((v) => row(l, v, rand(4), rand(3))));
      const lines = variants.filter(() => rand(2) === 0).map((v) => want(v, 1 + rand(5), rand(5) === 0));
      if (lines.length === 0) continue;
      const plan = planReservation(lines, stock);
      const availableOf = (l: string, v: string) => stock.filter((r) => r.locationId === l && r.variantId === v).reduce((s, r) => s + r.available, 0);
      if (!plan.ok) {
        for (const s of plan.short) expect(s.available).toBeLessThan(s.requested);
        continue;
      }
      for (const d of sumDemand(lines)) {
        const placed = plan.parcels.flatMap((p) => p.lines.filter((l) => l.variantId === d.variantId));
        expect(placed.reduce((s, l) => s + l.quantity, 0)).toBe(d.quantity);
        if (!d.preorder) expect(placed.every((l) => l.reserved === l.quantity)).toBe(true);
      }
      for (const p of plan.parcels) for (const l of p.lines) expect(l.reserved).toBeLessThanOrEqual(availableOf(p.locationId, l.variantId));
      // Minimal: no set of fewer locations holds every non-pre-order unit.
      const hard = sumDemand(lines).filter((d) => !d.preorder);
      const fewer = plan.parcels.filter((p) => p.lines.some((l) => l.reserved > 0)).length - 1;
      if (fewer >= 1 && hard.length === lines.length) {
        const subsets = (size: number, from = 0): string[][] =>
          size === 0 ? [[]] : locations.slice(from).flatMap((l, i) => subsets(size - 1, from + i + 1).map((rest) => [l, ...rest]));
        const coverable = subsets(fewer).some((set) => hard.every((d) => set.reduce((s, l) => s + availableOf(l, d.variantId), 0) >= d.quantity));
        expect(coverable).toBe(false);
      }
    }
  });
});
