import { and, asc, eq, ilike, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emit } from "../db/outbox";
import { ADJUSTMENT_REASONS, inventoryAdjustment, inventoryLevel, location, product, productVariant } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError, badRequest } from "../http/errors";
import { plan } from "../db/plan";
import { storeProcedure } from "./define";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";

const LOCATIONS_MAX = 200;
const DELTA_MAX = 1_000_000;

const variantNotFound = () => new AppError("NOT_FOUND", "Variant not found in this store.");
const locationNotFound = () => new AppError("NOT_FOUND", "Location not found in this store.");

const locationColumns = {
  id: location.id,
  name: location.name,
  sellsOnline: location.sellsOnline,
  city: location.city,
  createdAt: location.createdAt,
};

const levelVariantJoin = and(eq(productVariant.storeId, inventoryLevel.storeId), eq(productVariant.id, inventoryLevel.variantId));
const variantProductJoin = and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId));
const levelLocationJoin = and(eq(location.storeId, inventoryLevel.storeId), eq(location.id, inventoryLevel.locationId));

export const listLocations = storeProcedure({
  router: "locations",
  name: "list",
  description:
    "The store's stock locations (warehouses, shops) ordered by name, with their ids. Only locations that sell online count toward what the storefront can sell.",
  access: "inventory.read",
  mutates: false,
  input: z.strictObject({}),
  read: (q, { store }) =>
    plan(
      [q.select(locationColumns).from(location).where(eq(location.storeId, store)).orderBy(asc(location.name), asc(location.id)).limit(LOCATIONS_MAX)] as const,
      ([items]) => ({ items }),
    ),
});

export const createLocation = storeProcedure({
  router: "locations",
  name: "create",
  description:
    "Add a stock location. Set sellsOnline to false for a place whose stock the storefront must not sell (e.g. a shop counter). Names are unique within the store.",
  access: "inventory.write",
  mutates: true,
  input: z.strictObject({
    name: z.string().trim().min(1).max(120),
    sellsOnline: z.boolean().default(true).describe("Whether this location's stock can be sold online"),
    city: z.string().trim().min(1).max(120).optional(),
  }),
  async run({ tx }, input) {
    const [row] = await tx
      .insert(location)
      .values({ ...input, storeId: tx.storeId })
      .returning(locationColumns);
    await emit(tx, "location.created", { locationId: row!.id, sellsOnline: row!.sellsOnline });
    return row!;
  },
});

export const updateLocation = storeProcedure({
  router: "locations",
  name: "update",
  description:
    "Rename a location, change its city, or turn sellsOnline on or off (off: the storefront stops selling its stock; orders already placed keep their reservations).",
  access: "inventory.write",
  mutates: true,
  input: z.strictObject({
    id: z.uuid(),
    name: z.string().trim().min(1).max(120).optional(),
    sellsOnline: z.boolean().optional(),
    city: z.string().trim().min(1).max(120).nullable().optional(),
  }),
  async run({ tx }, input) {
    const { id, ...changes } = input;
    const where = and(eq(location.storeId, tx.storeId), eq(location.id, id));
    // Nothing to change: the location as it is (still NOT_FOUND for another store's id).
    if (Object.keys(changes).length === 0) {
      const [row] = await tx.select(locationColumns).from(location).where(where);
      if (!row) throw locationNotFound();
      return row;
    }
    const [row] = await tx.update(location).set(changes).where(where).returning(locationColumns);
    if (!row) throw locationNotFound();
    await emit(tx, "location.updated", { locationId: id, fields: Object.keys(changes) });
    return row;
  },
});

export const inventoryHistory = storeProcedure({
  router: "inventory",
  name: "history",
  description: "The stock changes of one variant, newest first: delta, on hand after, reason, note, location and when; optionally at one location.",
  access: "inventory.read",
  mutates: false,
  input: z.strictObject({ ...pagingInput, variantId: z.uuid(), locationId: z.uuid().optional() }),
  read(q, { store }, input) {
    const where = and(
      eq(inventoryAdjustment.storeId, store),
      eq(inventoryAdjustment.variantId, input.variantId),
      input.locationId ? eq(inventoryAdjustment.locationId, input.locationId) : undefined,
    );
    return pagePlan(
      q
        .select({
          id: inventoryAdjustment.id,
          locationId: inventoryAdjustment.locationId,
          locationName: location.name,
          delta: inventoryAdjustment.delta,
          onHandAfter: inventoryAdjustment.onHandAfter,
          reason: inventoryAdjustment.reason,
          note: inventoryAdjustment.note,
          byMember: sql<boolean>`${inventoryAdjustment.memberId} is not null`,
          createdAt: inventoryAdjustment.createdAt,
        })
        .from(inventoryAdjustment)
        .innerJoin(location, and(eq(location.storeId, inventoryAdjustment.storeId), eq(location.id, inventoryAdjustment.locationId)))
        .where(where)
        .orderBy(sql`${inventoryAdjustment.createdAt} desc`, sql`${inventoryAdjustment.id} desc`)
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(inventoryAdjustment).where(where),
      input,
    );
  },
});

export const listLevels = storeProcedure({
  router: "inventory",
  name: "levels",
  description:
    "Stock per variant and location (on hand, reserved, available), with paging. Filter by location, product or variant id, or search product title and SKU. Pairs never stocked are not listed.",
  access: "inventory.read",
  mutates: false,
  input: z.strictObject({
    ...pagingInput,
    locationId: z.uuid().optional(),
    productId: z.uuid().optional(),
    variantId: z.uuid().optional(),
    query: z.string().trim().max(200).optional(),
  }),
  read(q, { store }, input) {
    const conditions: (SQL | undefined)[] = [eq(inventoryLevel.storeId, store)];
    if (input.locationId) conditions.push(eq(inventoryLevel.locationId, input.locationId));
    if (input.variantId) conditions.push(eq(inventoryLevel.variantId, input.variantId));
    if (input.productId) conditions.push(eq(productVariant.productId, input.productId));
    if (input.query) {
      const pattern = likePattern(input.query);
      conditions.push(or(ilike(product.title, pattern), ilike(productVariant.sku, pattern)));
    }
    const where = and(...conditions);
    return pagePlan(
      q
        .select({
          variantId: inventoryLevel.variantId,
          productId: productVariant.productId,
          productTitle: product.title,
          variantTitle: productVariant.title,
          sku: productVariant.sku,
          locationId: inventoryLevel.locationId,
          locationName: location.name,
          sellsOnline: location.sellsOnline,
          onHand: inventoryLevel.onHand,
          reserved: inventoryLevel.reserved,
        })
        .from(inventoryLevel)
        .innerJoin(productVariant, levelVariantJoin)
        .innerJoin(product, variantProductJoin)
        .innerJoin(location, levelLocationJoin)
        .where(where)
        .orderBy(asc(product.title), asc(product.id), asc(productVariant.position), asc(productVariant.id), asc(location.name), asc(location.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q
        .select(countColumn())
        .from(inventoryLevel)
        .innerJoin(productVariant, levelVariantJoin)
        .innerJoin(product, variantProductJoin)
        .innerJoin(location, levelLocationJoin)
        .where(where),
      input,
      (item) => ({ ...item, available: item.onHand - item.reserved }),
    );
  },
});

/**
 * The variant row is the lock for its stock: adjustments of one variant run one at a time, so the
 * before/after totals behind the restock rule are exact. NO KEY UPDATE leaves foreign-key checks free.
 */
async function lockVariant(tx: StoreTx, variantId: string) {
  const [row] = await tx
    .select({ id: productVariant.id, productId: productVariant.productId })
    .from(productVariant)
    .where(and(eq(productVariant.storeId, tx.storeId), eq(productVariant.id, variantId)))
    .for("no key update");
  if (!row) throw variantNotFound();
  return row;
}

/** On hand minus reserved, summed over the locations that sell online. */
async function onlineAvailable(tx: StoreTx, variantId: string): Promise<number> {
  const [row] = await tx
    .select({ n: sql<number>`coalesce(sum(${inventoryLevel.onHand} - ${inventoryLevel.reserved}), 0)::int` })
    .from(inventoryLevel)
    .innerJoin(location, levelLocationJoin)
    .where(and(eq(inventoryLevel.storeId, tx.storeId), eq(inventoryLevel.variantId, variantId), eq(location.sellsOnline, true)));
  return row?.n ?? 0;
}

export const adjustInventory = storeProcedure({
  router: "inventory",
  name: "adjust",
  description:
    "Add (positive delta) or remove (negative delta) stock of one variant at one location, with a reason; every change is recorded. On hand can never go below zero.",
  access: "inventory.write",
  mutates: true,
  input: z.strictObject({
    variantId: z.uuid(),
    locationId: z.uuid(),
    delta: z
      .number()
      .int()
      .min(-DELTA_MAX)
      .max(DELTA_MAX)
      .refine((d) => d !== 0, "The change must not be zero")
      .describe("Units to add (positive) or remove (negative)"),
    reason: z.enum(ADJUSTMENT_REASONS),
    note: z.string().trim().max(500).optional(),
  }),
  async run({ tx, member }, input) {
    const variant = await lockVariant(tx, input.variantId);
    const [loc] = await tx
      .select({ id: location.id, sellsOnline: location.sellsOnline })
      .from(location)
      .where(and(eq(location.storeId, tx.storeId), eq(location.id, input.locationId)));
    if (!loc) throw locationNotFound();
    const [current] = await tx
      .select({ onHand: inventoryLevel.onHand })
      .from(inventoryLevel)
      .where(
        and(
          eq(inventoryLevel.storeId, tx.storeId),
          eq(inventoryLevel.variantId, variant.id),
          eq(inventoryLevel.locationId, loc.id),
        ),
      )
      .for("update");
    const onHandBefore = current?.onHand ?? 0;
    if (onHandBefore + input.delta < 0) {
      const message = `would take on-hand below zero (on hand ${onHandBefore})`;
      throw badRequest([{ path: "delta", message }], `This adjustment ${message}.`);
    }
    const [level] = await tx
      .insert(inventoryLevel)
      .values({ storeId: tx.storeId, variantId: variant.id, locationId: loc.id, onHand: onHandBefore + input.delta })
      .onConflictDoUpdate({
        target: [inventoryLevel.storeId, inventoryLevel.variantId, inventoryLevel.locationId],
        set: { onHand: sql`${inventoryLevel}.on_hand + ${input.delta}`, updatedAt: sql`now()` },
      })
      .returning({ onHand: inventoryLevel.onHand, reserved: inventoryLevel.reserved });
    const { onHand, reserved } = level!;
    await tx.insert(inventoryAdjustment).values({
      storeId: tx.storeId,
      variantId: variant.id,
      locationId: loc.id,
      delta: input.delta,
      onHandAfter: onHand,
      reason: input.reason,
      note: input.note,
      memberId: member.id,
    });
    await emit(tx, "inventory.adjusted", { variantId: variant.id, locationId: loc.id, delta: input.delta, onHandAfter: onHand, reason: input.reason });
    let restocked = false;
    if (loc.sellsOnline) {
      const after = await onlineAvailable(tx, variant.id);
      restocked = after - input.delta <= 0 && after > 0;
      if (restocked) await emit(tx, "inventory.restocked", { variantId: variant.id, productId: variant.productId, available: after });
    }
    return { variantId: variant.id, locationId: loc.id, onHand, reserved, available: onHand - reserved, restocked };
  },
});

export const inventoryProcedures = [listLocations, createLocation, updateLocation, listLevels, inventoryHistory, adjustInventory];
