/**
 * Where an order's units come from (SPEC "Checkout and payment behaviour" 2; ARCHITECTURE §15), as a pure
 * decision over the locked stock rows. The policy, in order:
 *
 *   1. Demand is summed per variant first (two lines of one variant count together).
 *   2. Fewest parcels: the smallest set of locations that sell online and can cover every in-stock unit.
 *   3. Among sets of that size, the one whose locations come first by priority (lower first), then name.
 *   4. Within the chosen set, each variant takes its units from the locations in that same order.
 *   5. Pre-order variants take what is on hand like any other, and the rest is backordered at the first
 *      location of the set that holds the variant (else the set's first location): backordered units
 *      reserve nothing, so available stock never goes below zero.
 *
 * Sets are searched exhaustively up to 12 candidate locations (4 095 subsets, a few ms at worst); a store
 * with more falls back to taking locations greedily in priority order, which may make one parcel more.
 */
export interface StockRow {
  locationId: string;
  locationName: string;
  priority: number;
  variantId: string;
  /** on_hand − reserved, never below 0. */
  available: number;
}

export interface Demand {
  variantId: string;
  quantity: number;
  preorder: boolean;
}

export interface PlannedLine {
  variantId: string;
  quantity: number;
  /** Units taken from the location's stock (the rest are backordered pre-order units). */
  reserved: number;
}

export interface PlannedParcel {
  locationId: string;
  lines: PlannedLine[];
}

export interface Shortage {
  variantId: string;
  requested: number;
  available: number;
}

export type ReservationPlan = { ok: true; parcels: PlannedParcel[] } | { ok: false; short: Shortage[] };

const EXHAUSTIVE_MAX_LOCATIONS = 12;

/** Demand per variant: lines of one variant summed, pre-order if any line of it is. */
export function sumDemand(lines: readonly Demand[]): Demand[] {
  const byVariant = new Map<string, Demand>();
  for (const l of lines) {
    if (!Number.isInteger(l.quantity) || l.quantity <= 0) throw new RangeError(`Demand for ${l.variantId} must be a positive integer`);
    const seen = byVariant.get(l.variantId);
    byVariant.set(l.variantId, seen ? { ...seen, quantity: seen.quantity + l.quantity, preorder: seen.preorder || l.preorder } : { ...l });
  }
  return [...byVariant.values()].sort((a, b) => (a.variantId < b.variantId ? -1 : a.variantId > b.variantId ? 1 : 0));
}

export function planReservation(lines: readonly Demand[], stock: readonly StockRow[]): ReservationPlan {
  const demand = sumDemand(lines);
  const locations = orderedLocations(stock);
  const have = new Map<string, number>(); // `${locationId} ${variantId}` → available
  const total = new Map<string, number>(); // variantId → available anywhere
  for (const r of stock) {
    const available = Math.max(0, r.available);
    have.set(`${r.locationId} ${r.variantId}`, (have.get(`${r.locationId} ${r.variantId}`) ?? 0) + available);
    total.set(r.variantId, (total.get(r.variantId) ?? 0) + available);
  }
  const short = demand
    .filter((d) => !d.preorder && (total.get(d.variantId) ?? 0) < d.quantity)
    .map((d) => ({ variantId: d.variantId, requested: d.quantity, available: total.get(d.variantId) ?? 0 }));
  if (short.length > 0) return { ok: false, short };

  // What must come from stock: everything, except that a pre-order variant needs only what is there.
  const needs = demand.map((d) => ({ ...d, fromStock: d.preorder ? Math.min(d.quantity, total.get(d.variantId) ?? 0) : d.quantity }));
  const covers = (set: readonly string[]) =>
    needs.every((n) => set.reduce((sum, loc) => sum + (have.get(`${loc} ${n.variantId}`) ?? 0), 0) >= n.fromStock);
  const chosen = smallestCoveringSet(locations, covers) ?? locations;

  const parcels = new Map<string, PlannedLine[]>(chosen.map((loc) => [loc, []]));
  for (const n of needs) {
    let left = n.fromStock;
    for (const loc of chosen) {
      const take = Math.min(left, have.get(`${loc} ${n.variantId}`) ?? 0);
      if (take > 0) parcels.get(loc)!.push({ variantId: n.variantId, quantity: take, reserved: take });
      left -= take;
    }
    const backordered = n.quantity - n.fromStock;
    if (backordered > 0) {
      const home = chosen.find((loc) => have.has(`${loc} ${n.variantId}`)) ?? chosen[0] ?? locations[0] ?? stock[0]?.locationId;
      if (!home) return { ok: false, short: [{ variantId: n.variantId, requested: n.quantity, available: 0 }] };
      const list = parcels.get(home) ?? [];
      const line = list.find((l) => l.variantId === n.variantId);
      if (line) line.quantity += backordered;
      else list.push({ variantId: n.variantId, quantity: backordered, reserved: 0 });
      parcels.set(home, list);
    }
  }
  const ordered = [...parcels.entries()]
    .filter(([, l]) => l.length > 0)
    .sort(([a], [b]) => locations.indexOf(a) - locations.indexOf(b))
    .map(([locationId, l]) => ({ locationId, lines: l }));
  return { ok: true, parcels: ordered };
}

/** Locations by priority, then name, then id (a stable, documented order). */
function orderedLocations(stock: readonly StockRow[]): string[] {
  const seen = new Map<string, StockRow>();
  for (const r of stock) if (!seen.has(r.locationId)) seen.set(r.locationId, r);
  return [...seen.values()]
    .sort((a, b) => a.priority - b.priority || a.locationName.localeCompare(b.locationName) || (a.locationId < b.locationId ? -1 : 1))
    .map((r) => r.locationId);
}

/** The first set (by size, then by the locations' order) that covers the demand; null when none does. */
function smallestCoveringSet(locations: readonly string[], covers: (set: readonly string[]) => boolean): string[] | null {
  if (covers([])) return [];
  if (locations.length > EXHAUSTIVE_MAX_LOCATIONS) {
    const greedy: string[] = [];
    for (const loc of locations) {
      greedy.push(loc);
      if (covers(greedy)) return greedy;
    }
    return null;
  }
  for (let size = 1; size <= locations.length; size++) {
    const found = firstCombination(locations, size, covers);
    if (found) return found;
  }
  return null;
}

/** Combinations of `size` in lexicographic order of positions, so earlier (higher-priority) sets come first. */
function firstCombination(items: readonly string[], size: number, accept: (set: readonly string[]) => boolean): string[] | null {
  const pick: number[] = Array.from({ length: size }, (_, i) => i);
  for (;;) {
    const set = pick.map((i) => items[i]!);
    if (accept(set)) return set;
    let i = size - 1;
    while (i >= 0 && pick[i] === items.length - size + i) i--;
    if (i < 0) return null;
    pick[i]!++;
    for (let j = i + 1; j < size; j++) pick[j] = pick[j - 1]! + 1;
  }
}
