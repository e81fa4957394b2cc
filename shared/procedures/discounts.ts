import { and, desc, eq, ilike, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, unchanged } from "../db/changes";
import { plan, thenPlan } from "../db/plan";
import { discount, DISCOUNT_KINDS, DISCOUNT_STATUSES } from "../db/schema";
import type { Q } from "../db/steps";
import { AppError, badRequest } from "../core/errors";
import { instant } from "../core/inputs";
import { DISCOUNT_STATE, DISCOUNT_STATES, type DiscountState } from "../storefront/discount-state";
import { storeProcedure } from "./define";
import { countColumn, likePattern, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

const MONEY_MAX = 100_000_000_000;
const PERCENT_MAX = 100;

const code = z
  .string()
  .trim()
  .toUpperCase()
  .regex(/^[A-Z0-9][A-Z0-9_-]{2,39}$/, "Use 3-40 letters, digits, _ or -, starting with a letter or digit (stored upper-case)");
const value = z
  .number()
  .int()
  .min(1)
  .max(MONEY_MAX)
  .describe("percentage: whole percent 1-100; fixed_amount: minor units of the store currency (paise for INR)");
const usageLimit = z.number().int().min(1).max(2_147_483_647).describe("How many times the code can be used in total");

const tooHigh = `A percentage discount is at most ${PERCENT_MAX}.`;
const endsTooEarly = "endsAt must be after startsAt.";

const discountNotFound = () => new AppError("NOT_FOUND", "Discount not found in this store.");

const discountColumns = {
  id: discount.id,
  code: discount.code,
  kind: discount.kind,
  value: discount.value,
  startsAt: discount.startsAt,
  endsAt: discount.endsAt,
  usageLimit: discount.usageLimit,
  usageCount: discount.usageCount,
  status: discount.status,
  state: sql<DiscountState>`${DISCOUNT_STATE}`,
};

const ofDiscount = (store: SQL, id: string) => and(eq(discount.storeId, store), eq(discount.id, id));

/** One discount with its state; NOT_FOUND when the store has none with this id. */
function discountPlan(q: Q, store: SQL, id: string) {
  return plan([q.select(discountColumns).from(discount).where(ofDiscount(store, id))] as const, ([[row]]) => {
    if (!row) throw discountNotFound();
    return row;
  });
}

/** A discount code as the discount procedures answer it; `state` is what the storefront makes of it now. */
const discountOutput = z.object({
  id: out.id,
  code: z.string(),
  kind: z.enum(DISCOUNT_KINDS),
  value: z.number().int(),
  startsAt: out.instant,
  endsAt: out.instant.nullable(),
  usageLimit: z.number().int().nullable(),
  usageCount: z.number().int(),
  status: z.enum(DISCOUNT_STATUSES),
  state: z.enum(DISCOUNT_STATES),
});

export const listDiscounts = storeProcedure({
  router: "discounts",
  name: "list",
  description:
    "List the store's discount codes, newest first, with paging. Filter by status (active/disabled) or search the code. Each has a state: live, scheduled, expired, used_up or disabled.",
  access: "discounts.read",
  mutates: false,
  output: out.paged(discountOutput),
  input: z.strictObject({
    ...pagingInput,
    status: z.enum(DISCOUNT_STATUSES).optional(),
    query: z.string().trim().max(100).optional(),
  }),
  read(q, { store }, input) {
    const conditions: (SQL | undefined)[] = [eq(discount.storeId, store)];
    if (input.status) conditions.push(eq(discount.status, input.status));
    if (input.query) conditions.push(ilike(discount.code, likePattern(input.query)));
    const where = and(...conditions);
    return pagePlan(
      q.select(discountColumns).from(discount).where(where).orderBy(desc(discount.createdAt), desc(discount.id)).limit(input.pageSize).offset(offsetOf(input)),
      q.select(countColumn()).from(discount).where(where),
      input,
    );
  },
});

export const createDiscount = storeProcedure({
  router: "discounts",
  name: "create",
  description:
    "Create an active discount code (upper-cased). kind percentage takes value 1-100; fixed_amount takes value in minor units (paise for INR). startsAt defaults to now; endsAt and usageLimit are optional.",
  access: "discounts.write",
  mutates: true,
  output: discountOutput,
  input: z
    .strictObject({
      code,
      kind: z.enum(DISCOUNT_KINDS),
      value,
      startsAt: instant.optional().describe("ISO 8601 date-time with offset, e.g. 2025-10-01T00:00:00+05:30; default now"),
      endsAt: instant.optional().describe("ISO 8601 date-time with offset, after startsAt; omit for no end"),
      usageLimit: usageLimit.optional(),
    })
    .refine((d) => d.kind !== "percentage" || d.value <= PERCENT_MAX, { path: ["value"], message: tooHigh })
    .refine((d) => !d.endsAt || d.endsAt > (d.startsAt ?? new Date()), { path: ["endsAt"], message: endsTooEarly }),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      return thenPlan(
        [q.insert(discount).values({ ...input, id, storeId: store }), emitStep(q, "discount.created", { discountId: id, code: input.code })],
        discountPlan(q, store, id),
      );
    },
  },
});

export const updateDiscount = storeProcedure({
  router: "discounts",
  name: "update",
  description:
    "Change a discount's code, value, startsAt, endsAt (null for no end) or usageLimit (null for unlimited). The kind cannot change; disable the code and create a new one instead.",
  access: "discounts.write",
  mutates: true,
  output: discountOutput,
  input: z.strictObject({
    id: z.uuid(),
    code: code.optional(),
    value: value.optional(),
    startsAt: instant.optional(),
    endsAt: instant.nullable().optional(),
    usageLimit: usageLimit.nullable().optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, ...fields } = input;
      const where = ofDiscount(store, id);
      // The checks of create, on the discount as it would be: each field as given, or as stored.
      const value = fields.value === undefined ? sql`${discount.value}` : sql`${fields.value}::bigint`;
      const startsAt = fields.startsAt === undefined ? sql`${discount.startsAt}` : sql`${fields.startsAt.toISOString()}::timestamptz`;
      const endsAt = fields.endsAt === undefined ? sql`${discount.endsAt}` : sql`${fields.endsAt?.toISOString() ?? null}::timestamptz`;
      const holds = (condition: SQL) => sql`exists (select 1 from ${discount} where ${where} and (${condition}))`;
      return thenPlan(
        [
          ensure(q, sql`exists (select 1 from ${discount} where ${where} for update)`, discountNotFound()),
          ensure(q, holds(sql`${discount.kind} <> 'percentage' or ${value} <= ${PERCENT_MAX}`), badRequest([{ path: "value", message: tooHigh }])),
          ensure(
            q,
            holds(sql`${endsAt} is null or ${endsAt} > ${startsAt}`),
            badRequest([{ path: fields.startsAt && fields.endsAt === undefined ? "startsAt" : "endsAt", message: endsTooEarly }]),
          ),
          q.update(discount).set({ ...fields, updatedAt: sql`now()` }).where(where),
          emitStep(q, "discount.updated", { discountId: id, fields: Object.keys(fields) }),
        ],
        discountPlan(q, store, id),
      );
    },
  },
});

export const disableDiscount = storeProcedure({
  router: "discounts",
  name: "disable",
  description:
    "Disable a discount code so it can no longer be used; its usage history stays. Disabling an already disabled code changes nothing.",
  access: "discounts.write",
  mutates: true,
  output: discountOutput,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    // Only the transition is an event, so the status is read first (NOT_FOUND for another store's id); the
    // change checks it still holds. A repeated call changes nothing.
    prepare: (q, { store }, input) =>
      plan([q.select({ status: discount.status }).from(discount).where(ofDiscount(store, input.id))] as const, ([[row]]) => {
        if (!row) throw discountNotFound();
        return row.status;
      }),
    apply(q, { store }, input, status: string) {
      const where = ofDiscount(store, input.id);
      return thenPlan(
        [
          unchanged(q, sql`exists (select 1 from ${discount} where ${where} and ${discount.status} = ${status} for update)`),
          ...(status === "active"
            ? [
                q.update(discount).set({ status: "disabled", updatedAt: sql`now()` }).where(where),
                emitStep(q, "discount.disabled", { discountId: input.id.toLowerCase() }),
              ]
            : []),
        ],
        discountPlan(q, store, input.id),
      );
    },
  },
});

export const discountsProcedures = [listDiscounts, createDiscount, updateDiscount, disableDiscount];
