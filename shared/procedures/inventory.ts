import { and, asc, eq, ilike, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, ensureSql } from "../db/changes";
import { ADJUSTMENT_REASONS, inventoryAdjustment, STOCK_CHANGE_REASONS, inventoryLevel, location, product, productVariant } from "../db/schema";
import { AppError } from "../core/errors";
import { plan } from "../db/plan";
import type { Q, Step } from "../db/steps";
import { storeProcedure } from "./define";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

const LOCATIONS_MAX = 200;
const DELTA_MAX = 1_000_000;

const variantNotFound = () => new AppError("NOT_FOUND", "Variant not found in this store.");
export const locationNotFound = () => new AppError("NOT_FOUND", "Location not found in this store.");

/** A location as the procedures answer it, with its tax identity (locations.updateTaxIdentity, ./tax-identity.ts). */
export const locationColumns = {
  id: location.id,
  name: location.name,
  sellsOnline: location.sellsOnline,
  city: location.city,
  state: location.state,
  gstin: location.gstin,
  legalName: location.legalName,
  addressLine1: location.addressLine1,
  addressLine2: location.addressLine2,
  postalCode: location.postalCode,
  createdAt: location.createdAt,
};

const levelVariantJoin = and(eq(productVariant.storeId, inventoryLevel.storeId), eq(productVariant.id, inventoryLevel.variantId));
const variantProductJoin = and(eq(product.storeId, productVariant.storeId), eq(product.id, productVariant.productId));
const levelLocationJoin = and(eq(location.storeId, inventoryLevel.storeId), eq(location.id, inventoryLevel.locationId));

/** A stock location as the location procedures answer it. */
export const locationOutput = z.object({
  id: out.id,
  name: z.string(),
  sellsOnline: z.boolean(),
  city: z.string().nullable(),
  state: z.string().nullable(),
  gstin: z.string().nullable(),
  legalName: z.string().nullable(),
  addressLine1: z.string().nullable(),
  addressLine2: z.string().nullable(),
  postalCode: z.string().nullable(),
  createdAt: out.instant,
});

export const listLocations = storeProcedure({
  router: "locations",
  name: "list",
  description:
    "The store's stock locations (warehouses, shops) ordered by name, with their ids, state, GSTIN, legal name and address. Only locations that sell online count toward what the storefront can sell.",
  access: "inventory.read",
  mutates: false,
  output: z.object({ items: z.array(locationOutput) }),
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
  output: locationOutput,
  input: z.strictObject({
    name: z.string().trim().min(1).max(120),
    sellsOnline: z.boolean().default(true).describe("Whether this location's stock can be sold online"),
    city: z.string().trim().min(1).max(120).optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      return plan(
        [
          q.insert(location).values({ ...input, id, storeId: store }).returning(locationColumns),
          emitStep(q, "location.created", { locationId: id, sellsOnline: input.sellsOnline }),
        ] as const,
        ([[row]]) => row!,
      );
    },
  },
});

export const updateLocation = storeProcedure({
  router: "locations",
  name: "update",
  description:
    "Rename a location, change its city, or turn sellsOnline on or off (off: the storefront stops selling its stock; orders already placed keep their reservations).",
  access: "inventory.write",
  mutates: true,
  output: locationOutput,
  input: z.strictObject({
    id: z.uuid(),
    name: z.string().trim().min(1).max(120).optional(),
    sellsOnline: z.boolean().optional(),
    city: z.string().trim().min(1).max(120).nullable().optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, ...changes } = input;
      const where = and(eq(location.storeId, store), eq(location.id, id));
      const found = ensure(q, sql`exists (select 1 from ${location} where ${where} for no key update)`, locationNotFound());
      // Nothing to change: the location as it is (still NOT_FOUND for another store's id).
      if (Object.keys(changes).length === 0) return plan([found, q.select(locationColumns).from(location).where(where)] as const, ([, [row]]) => row!);
      return plan(
        [
          found,
          q.update(location).set(changes).where(where).returning(locationColumns),
          emitStep(q, "location.updated", { locationId: id, fields: Object.keys(changes) }),
        ] as const,
        ([, [row]]) => row!,
      );
    },
  },
});

export const inventoryHistory = storeProcedure({
  router: "inventory",
  name: "history",
  description: "The stock changes of one variant, newest first: delta, on hand after, reason, note, location and when; optionally at one location.",
  access: "inventory.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, locationId: out.id, locationName: z.string(), delta: z.number().int(), onHandAfter: z.number().int(), reason: z.enum(STOCK_CHANGE_REASONS), note: z.string().nullable(), byMember: z.boolean(), createdAt: out.instant })),
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
  output: out.paged(z.object({ variantId: out.id, productId: out.id, productTitle: z.string(), variantTitle: z.string(), sku: z.string().nullable(), locationId: out.id, locationName: z.string(), sellsOnline: z.boolean(), onHand: z.number().int(), reserved: z.number().int(), available: z.number().int() })),
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

const levelOf = (store: SQL, variantId: string, locationId: string) =>
  and(eq(inventoryLevel.storeId, store), eq(inventoryLevel.variantId, variantId), eq(inventoryLevel.locationId, locationId));

/** Refuses (400) an adjustment that would take on hand below zero, naming the stock it found; locks the stock row when there is one. */
function staysAtOrAboveZero(q: Q, store: SQL, input: { variantId: string; locationId: string; delta: number }): Step {
  const onHand = (lock: boolean) =>
    sql`coalesce((select ${inventoryLevel.onHand} from ${inventoryLevel} where ${levelOf(store, input.variantId, input.locationId)}${lock ? sql` for update` : sql``}), 0)`;
  const why = sql`'would take on-hand below zero (on hand ' || ${onHand(false)} || ')'`;
  return ensureSql(
    q,
    sql`${onHand(true)} + ${input.delta}::int >= 0`,
    "BAD_REQUEST",
    sql`'This adjustment ' || ${why} || '.'`,
    sql`jsonb_build_object('issues', jsonb_build_array(jsonb_build_object('path', 'delta', 'message', ${why})))`,
  );
}

/**
 * inventory.restocked, written only when the adjustment took what the locations that sell online have
 * available (on hand minus reserved) from zero or less to more than zero; its row says whether it was.
 */
function restockedStep(q: Q, store: SQL, input: { variantId: string; locationId: string; delta: number }): Step<{ id: string }[]> {
  const available = sql`(select coalesce(sum(l.on_hand - l.reserved), 0)::int from ${inventoryLevel} l
    join ${location} o on o.store_id = l.store_id and o.id = l.location_id
    where l.store_id = ${store} and l.variant_id = ${input.variantId} and o.sells_online)`;
  const sellsOnline = sql`exists (select 1 from ${location} where ${location.storeId} = ${store} and ${location.id} = ${input.locationId} and ${location.sellsOnline})`;
  return emitStep(
    q,
    "inventory.restocked",
    sql`(select jsonb_build_object('variantId', ${productVariant.id}, 'productId', ${productVariant.productId}, 'available', ${available})
         from ${productVariant} where ${productVariant.storeId} = ${store} and ${productVariant.id} = ${input.variantId})`,
    { when: sql`${sellsOnline} and ${available} - ${input.delta}::int <= 0 and ${available} > 0` },
  );
}

export const adjustInventory = storeProcedure({
  router: "inventory",
  name: "adjust",
  description:
    "Add (positive delta) or remove (negative delta) stock of one variant at one location, with a reason; every change is recorded. On hand can never go below zero.",
  access: "inventory.write",
  mutates: true,
  output: z.object({ variantId: out.id, locationId: out.id, onHand: z.number().int(), reserved: z.number().int(), available: z.number().int(), restocked: z.boolean() }),
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
  write: {
    apply(q, { store, memberId }, input) {
      const ids = { variantId: input.variantId, locationId: input.locationId };
      const level = levelOf(store, input.variantId, input.locationId);
      const onHandAfter = sql`(select ${inventoryLevel.onHand} from ${inventoryLevel} where ${level})`;
      return plan(
        [
          // The variant row is the lock for its stock: adjustments of one variant run one at a time, so the
          // before/after totals behind the restock rule are exact. NO KEY UPDATE leaves foreign-key checks free.
          ensure(
            q,
            sql`exists (select 1 from ${productVariant} where ${productVariant.storeId} = ${store} and ${productVariant.id} = ${input.variantId} for no key update)`,
            variantNotFound(),
          ),
          ensure(q, sql`exists (select 1 from ${location} where ${location.storeId} = ${store} and ${location.id} = ${input.locationId})`, locationNotFound()),
          staysAtOrAboveZero(q, store, input),
          q
            .insert(inventoryLevel)
            // A new row starts at the delta (never negative past the guard); the proposed row must pass the checks even when it updates.
            .values({ ...ids, storeId: store, onHand: sql`greatest(${input.delta}::int, 0)` })
            .onConflictDoUpdate({
              target: [inventoryLevel.storeId, inventoryLevel.variantId, inventoryLevel.locationId],
              set: { onHand: sql`${inventoryLevel}.on_hand + ${input.delta}`, updatedAt: sql`now()` },
            })
            .returning({ variantId: inventoryLevel.variantId, locationId: inventoryLevel.locationId, onHand: inventoryLevel.onHand, reserved: inventoryLevel.reserved }),
          q.insert(inventoryAdjustment).values({ ...ids, storeId: store, delta: input.delta, onHandAfter, reason: input.reason, note: input.note, memberId }),
          emitStep(
            q,
            "inventory.adjusted",
            sql`(select jsonb_build_object('variantId', ${inventoryLevel.variantId}, 'locationId', ${inventoryLevel.locationId}, 'delta', ${input.delta}::int,
                   'onHandAfter', ${inventoryLevel.onHand}, 'reason', ${input.reason}::text) from ${inventoryLevel} where ${level})`,
          ),
          restockedStep(q, store, input),
        ] as const,
        ([, , , [row], , , restocked]) => {
          const { variantId, locationId, onHand, reserved } = row!;
          return { variantId, locationId, onHand, reserved, available: onHand - reserved, restocked: restocked.length > 0 };
        },
      );
    },
  },
});

export const inventoryProcedures = [listLocations, createLocation, updateLocation, listLevels, inventoryHistory, adjustInventory];
