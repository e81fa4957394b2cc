import { and, desc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure } from "../db/changes";
import { plan, thenPlan } from "../db/plan";
import { CONSENT_SOURCES, CONSENT_STATES, customer, marketingConsentRecord } from "../db/schema";
import type { Q } from "../db/steps";
import { customerSearchCount, forgetRecipient } from "./statements/store";
import { AppError, badRequest } from "../core/errors";
import { storeProcedure } from "./define";
import { cappedCount, countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import { customerSearch, searchWords } from "./search";
import * as out from "./outputs";

const PHONE = /^\+[1-9][0-9]{6,14}$/;
const NEED_CONTACT = "A customer needs an email or a phone number (or both).";

const customerNotFound = () => new AppError("NOT_FOUND", "Customer not found in this store.");

const fields = {
  email: z.email().max(320),
  phone: z.string().trim().regex(PHONE, "Use E.164 format with the country code, e.g. +919876543210"),
  firstName: z.string().trim().min(1).max(120),
  lastName: z.string().trim().min(1).max(120),
  city: z.string().trim().min(1).max(120),
  acceptsMarketing: z
    .boolean()
    .describe("Whether the customer's consent to marketing messages is confirmed (given to a member, or confirmed by the customer); false never cancels a request waiting for the customer's confirmation"),
  note: z.string().trim().max(5000).describe("Private note for staff"),
};

/**
 * A member changed the customer's marketing consent (when and how it last changed is kept, and a trigger
 * records each change with its source in marketing_consent_record; docs/marketing.md). The state
 * (`marketingConsent`: none, pending, confirmed, withdrawn) follows from the columns (migration 0033).
 */
const consentStamp = { marketingConsentUpdatedAt: sql`now()`, marketingConsentSource: "staff" as const };

/** The same, only when `acceptsMarketing` makes a change (the right-hand side reads the row as it was). */
const consentStampIfChanged = (acceptsMarketing: boolean) => {
  const changes = sql`${customer.acceptsMarketing} is distinct from ${acceptsMarketing}`;
  return {
    marketingConsentUpdatedAt: sql`case when ${changes} then now() else ${customer.marketingConsentUpdatedAt} end`,
    marketingConsentSource: sql`case when ${changes} then 'staff' else ${customer.marketingConsentSource} end`,
  };
};

const ofCustomer = (store: SQL, id: string) => and(eq(customer.storeId, store), eq(customer.id, id));

/** The customer exists in the store; it is locked for the rest of the change (`update` when it goes). */
const customerFound = (q: Q, store: SQL, id: string, lock: "update" | "no key update") =>
  ensure(q, sql`exists (select 1 from ${customer} where ${ofCustomer(store, id)} for ${sql.raw(lock)})`, customerNotFound());

/** What customers.list shows: no contact details, which only customers.get returns. */
const summaryColumns = {
  id: customer.id,
  firstName: customer.firstName,
  lastName: customer.lastName,
  acceptsMarketing: customer.acceptsMarketing,
  marketingConsent: customer.marketingConsent,
  createdAt: customer.createdAt,
  updatedAt: customer.updatedAt,
};

const detailColumns = {
  ...summaryColumns,
  marketingConsentUpdatedAt: customer.marketingConsentUpdatedAt,
  marketingConsentSource: customer.marketingConsentSource,
  marketingConsentRequestedAt: customer.marketingConsentRequestedAt,
  email: customer.email,
  phone: customer.phone,
  city: customer.city,
  note: customer.note,
};

/** customers.list's order, newest first: customer_store_search_idx's key. */
const NEWEST_FIRST = [desc(customer.createdAt), desc(customer.id)];

const customerRow = z.object({
  id: out.id,
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  acceptsMarketing: z.boolean(),
  marketingConsent: z.enum(CONSENT_STATES),
  createdAt: out.instant,
  updatedAt: out.instant,
});
/** A customer as customers.get answers: contact details and the consent's history. */
const customerOutput = customerRow.extend({
  email: z.string().nullable(),
  phone: z.string().nullable(),
  city: z.string().nullable(),
  note: z.string().nullable(),
  marketingConsentUpdatedAt: out.instant.nullable(),
  marketingConsentSource: z.enum(CONSENT_SOURCES).nullable(),
  marketingConsentRequestedAt: out.instant.nullable(),
});

/**
 * Newest first; the search is by words (./search.ts, migration 0030): each word of the query begins a word of
 * the customer's name, email or phone (the phone's digits, with or without the country code), found as an
 * index range of customer_search_token under RLS (docs/database.md "Scale"). The page's customers are picked
 * first (from customer_store_search_idx in order, or from the tokens of a rare word) and only their rows read.
 */
export const listCustomers = storeProcedure({
  router: "customers",
  name: "list",
  description:
    "List the store's customers, newest first, with paging; query finds the customers with words beginning with each of its words, ignoring case, in the name, email or phone (\"priya sh\", \"sharma@\", \"98765\" or \"+91 98765\"). Items carry names only: use customers.get for contact details.",
  access: "customers.read",
  mutates: false,
  output: out.paged(customerRow),
  input: z.strictObject({
    ...pagingInput,
    query: z.string().trim().max(200).optional(),
  }),
  read(q, { store, contact }, input) {
    const rows = (page: SQL) => q.select(summaryColumns).from(customer).where(and(eq(customer.storeId, store), sql`${customer.id} in ${page}`)).orderBy(...NEWEST_FIRST);
    if (input.query) {
      // Found from the tokens (./search.ts), and only the page's customers read. An AI client barred from
      // customer details may not probe them by searching either (`contact`). A query without words (only
      // punctuation) finds nobody.
      const [first, ...rest] = searchWords(input.query);
      if (first === undefined) return pagePlan(rows(sql`(select null::uuid where false)`), cappedCount(q, sql`select 1 where false`), input);
      const search = customerSearch(store, contact, [first, ...rest], { limit: input.pageSize, offset: offsetOf(input) });
      return pagePlan(rows(search.page), customerSearchCount(q, store, contact, [first, ...rest]), input);
    }
    const page = q.select({ id: customer.id }).from(customer).where(eq(customer.storeId, store)).orderBy(...NEWEST_FIRST).limit(input.pageSize).offset(offsetOf(input));
    return pagePlan(rows(sql`${page}`), q.select(countColumn()).from(customer).where(eq(customer.storeId, store)), input);
  },
});

export const getCustomer = storeProcedure({
  router: "customers",
  name: "get",
  description: "One customer by id, with contact details (email, phone, city), marketing consent and the staff note.",
  access: "customers.read",
  mutates: false,
  output: customerOutput,
  customerDetails: true,
  input: z.strictObject({ id: z.uuid() }),
  read: (q, { store }, input) =>
    plan([q.select(detailColumns).from(customer).where(ofCustomer(store, input.id))] as const, ([[row]]) => {
      if (!row) throw customerNotFound();
      return row;
    }),
});

export const createCustomer = storeProcedure({
  router: "customers",
  name: "create",
  description:
    "Add a customer. Give an email, a phone number in E.164 format (+919876543210), or both; emails are unique within the store.",
  access: "customers.write",
  mutates: true,
  output: customerOutput,
  input: z
    .strictObject({
      email: fields.email.optional(),
      phone: fields.phone.optional(),
      firstName: fields.firstName.optional(),
      lastName: fields.lastName.optional(),
      city: fields.city.optional(),
      acceptsMarketing: fields.acceptsMarketing.default(false),
      note: fields.note.optional(),
    })
    .refine((v) => v.email !== undefined || v.phone !== undefined, { path: ["email"], message: NEED_CONTACT }),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      return plan(
        [
          q
            .insert(customer)
            .values({ ...input, id, storeId: store, ...(input.acceptsMarketing ? consentStamp : {}) })
            .returning(detailColumns),
          emitStep(q, "customer.created", { customerId: id }),
        ] as const,
        ([[row]]) => row!,
      );
    },
  },
});

export const updateCustomer = storeProcedure({
  router: "customers",
  name: "update",
  description:
    "Change a customer's details; only the fields given change, and null clears a field. The customer must keep an email or a phone number.",
  access: "customers.write",
  mutates: true,
  output: customerOutput,
  input: z.strictObject({
    id: z.uuid(),
    email: fields.email.nullable().optional(),
    phone: fields.phone.nullable().optional(),
    firstName: fields.firstName.nullable().optional(),
    lastName: fields.lastName.nullable().optional(),
    city: fields.city.nullable().optional(),
    acceptsMarketing: fields.acceptsMarketing.optional(),
    note: fields.note.nullable().optional(),
  }),
  write: {
    apply(q, { store }, input) {
      const { id, ...changes } = input;
      const changed = Object.keys(changes);
      const where = ofCustomer(store, id);
      const found = customerFound(q, store, id, "no key update");
      if (changed.length === 0) return thenPlan([found], plan([q.select(detailColumns).from(customer).where(where)] as const, ([[row]]) => row!));
      // The customer keeps an email or a phone: each as given, or as stored when not given.
      const email = changes.email === undefined ? sql`${customer.email}` : sql`${changes.email}::text`;
      const phone = changes.phone === undefined ? sql`${customer.phone}` : sql`${changes.phone}::text`;
      const keepsContact = ensure(
        q,
        sql`exists (select 1 from ${customer} where ${where} and (${email} is not null or ${phone} is not null))`,
        badRequest([{ path: changes.email === null ? "email" : "phone", message: NEED_CONTACT }]),
      );
      const consent = changes.acceptsMarketing === undefined ? {} : consentStampIfChanged(changes.acceptsMarketing);
      return thenPlan(
        changes.email === null || changes.phone === null ? [found, keepsContact] : [found],
        plan(
          [
            q.update(customer).set({ ...changes, updatedAt: sql`now()`, ...consent }).where(where).returning(detailColumns),
            emitStep(q, "customer.updated", { customerId: id, fields: changed }),
          ] as const,
          ([[row]]) => row!,
        ),
      );
    },
  },
});

export const deleteCustomer = storeProcedure({
  router: "customers",
  name: "delete",
  description:
    "Delete a customer for good: contact details, note and marketing consent, and any marketing email still queued for them. Orders keep the email they were placed with; a later order with that email adds the buyer again, without consent.",
  access: "records.delete",
  mutates: true,
  output: out.deleted,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const where = ofCustomer(store, input.id);
      return plan(
        [
          customerFound(q, store, input.id, "update"),
          // Their marketing messages go with them (the foreign key cascades); the campaigns that chose them count
          // one recipient fewer, so each campaign's counts still add up.
          forgetRecipient(q, store, input.id),
          q.delete(customer).where(where).returning({ id: customer.id }),
          // The event names no contact detail: the customer asked to be forgotten, apps learn only the id.
          emitStep(q, "customer.deleted", { customerId: input.id.toLowerCase() }),
        ] as const,
        ([, , [row]]) => ({ id: row!.id, deleted: true }),
      );
    },
  },
});

/** A customer's consent records, newest first (at most `limit`): what the admin's customer page lists. One statement. */
export function consentRecordsPlan(q: Q, store: SQL, customerId: string, limit: number) {
  return plan(
    [
      q
        .select({ state: marketingConsentRecord.state, source: marketingConsentRecord.source, recordedAt: marketingConsentRecord.recordedAt })
        .from(marketingConsentRecord)
        .where(and(eq(marketingConsentRecord.storeId, store), eq(marketingConsentRecord.customerId, customerId)))
        .orderBy(desc(marketingConsentRecord.recordedAt), desc(marketingConsentRecord.id))
        .limit(limit),
    ] as const,
    ([rows]) => rows,
  );
}

export const customersProcedures = [listCustomers, getCustomer, createCustomer, updateCustomer, deleteCustomer];
