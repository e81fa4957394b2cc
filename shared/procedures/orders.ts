import { and, asc, desc, eq, gte, lt, or, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { MERCHANT_TASK_KINDS, ORDER_CHANNELS, PAYMENT_METHODS, REFUND_STATUSES, RETURN_STATUSES, SHIPMENT_ROW_STATUSES, shopOrder, TAX_CLASSES } from "../db/schema";
import { cancelPlan, cancelReadingPlan, markPaidPlan, markPaidReadingPlan, type Cancel, type MarkPaid } from "../orders/actions";
import { orderDetailPlan } from "../orders/order-detail";
import { ATTEMPT_STATUSES, FULFILLMENT_STATUSES, ORDER_STATUSES, PAYMENT_STATUSES } from "../rules/status";
import type { Q } from "../db/steps";
import { orderSearchCount } from "./statements/store";
import { instant } from "../core/inputs";
import { storeProcedure } from "./define";
import type { Scope } from "./scope";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import { orderHasWord, orderSearch, searchWords } from "./search";
import * as out from "./outputs";

const orderId = z.uuid().describe("The order's id");

/** `#1002` or `1002`: an order number. */
const ORDER_NUMBER = /^#?([0-9]{1,9})$/;

const listInput = z
  .strictObject({
    ...pagingInput,
    query: z.string().trim().max(200).optional(),
    email: z.email().max(320).optional(),
    status: z.enum(ORDER_STATUSES).optional(),
    paymentStatus: z.enum(PAYMENT_STATUSES).optional(),
    fulfillmentStatus: z.enum(FULFILLMENT_STATUSES).optional(),
    channel: z.enum(ORDER_CHANNELS).optional().describe("Where the orders came from: online_store (the storefront's checkout) or ucp (an AI agent's UCP checkout session)"),
    placedFrom: instant.optional(),
    placedTo: instant.optional(),
  })
  .refine((v) => !v.placedFrom || !v.placedTo || v.placedTo > v.placedFrom, {
    path: ["placedTo"],
    message: "placedTo must be after placedFrom.",
  });

type OrdersInput = z.output<typeof listInput>;

/** An order as the order procedures answer it (OrderView): money in minor units, with its parcels' shares and GST. */
export const orderOutput = z.object({
  id: out.id,
  number: z.number().int(),
  email: z.string(),
  status: z.enum(ORDER_STATUSES),
  paymentStatus: z.enum(PAYMENT_STATUSES),
  fulfillmentStatus: z.enum(FULFILLMENT_STATUSES),
  /** Where the order came from: the storefront's checkout, or an AI agent's UCP checkout session. */
  channel: z.enum(ORDER_CHANNELS),
  currency: z.string(),
  subtotal: out.minor,
  discount: out.minor,
  shipping: out.minor,
  tax: out.minor,
  total: out.minor,
  buyerGstin: z.string().nullable(),
  buyerLegalName: z.string().nullable(),
  parcels: z.array(
    z.object({
      id: out.id,
      locationId: out.id.nullable(),
      subtotal: out.minor,
      discount: out.minor,
      shipping: out.minor,
      tax: out.minor,
      cgst: out.minor,
      sgst: out.minor,
      igst: out.minor,
    }),
  ),
});

/** What orders.get answers (OrderDetail): the order with its lines, payment attempts, shipments, refunds, returns, tasks and timeline. */
const orderDetailOutput = orderOutput.extend({
  phone: z.string().nullable(),
  shippingAddress: z.record(z.string(), z.string()),
  paymentMethod: z.enum(PAYMENT_METHODS),
  discountCode: z.string().nullable(),
  placedAt: out.instant,
  expiresAt: out.instant.nullable(),
  lines: z.array(
    z.object({
      id: out.id,
      variantId: out.id.nullable(),
      productTitle: z.string(),
      variantTitle: z.string(),
      sku: z.string().nullable(),
      taxClass: z.enum(TAX_CLASSES),
      quantity: z.number().int(),
      unitPrice: out.minor,
      lineTotal: out.minor,
      discount: out.minor,
      preorder: z.boolean(),
    }),
  ),
  attempts: z.array(
    z.object({
      id: out.id,
      attempt: z.number().int(),
      idempotencyKey: z.string(),
      status: z.enum(ATTEMPT_STATUSES),
      provider: z.string(),
      amount: out.minor,
      createdAt: out.instant,
      review: z
        .object({
          reason: z.enum(["amount_below", "currency_differs"]),
          report: z.object({ status: z.string(), amount: out.minor, currency: z.string().nullable(), paymentId: z.string().nullable(), trigger: z.string() }),
          at: out.instant,
        })
        .nullable(),
    }),
  ),
  shipments: z.array(
    z.object({
      id: out.id,
      parcelId: out.id,
      provider: z.string(),
      awb: z.string(),
      courierName: z.string().nullable(),
      trackingUrl: z.string().nullable(),
      status: z.enum(SHIPMENT_ROW_STATUSES),
      statusAt: out.instant,
      createdAt: out.instant,
      events: z.array(z.object({ status: z.string(), providerStatus: z.string().nullable(), source: z.string(), occurredAt: out.instant })),
    }),
  ),
  refunds: z.array(z.object({ id: out.id, amount: out.minor, status: z.enum(REFUND_STATUSES), reason: z.string().nullable(), returnId: out.id.nullable(), createdAt: out.instant })),
  returns: z.array(
    z.object({
      id: out.id,
      number: z.number().int(),
      status: z.enum(RETURN_STATUSES),
      reason: z.string(),
      note: z.string().nullable(),
      restocked: z.boolean(),
      lines: z.array(z.object({ orderLineId: out.id, quantity: z.number().int() })),
      createdAt: out.instant,
    }),
  ),
  tasks: z.array(z.object({ id: out.id, kind: z.enum(MERCHANT_TASK_KINDS), subjectId: out.id, title: z.string(), status: z.enum(["open", "done"]), createdAt: out.instant })),
  events: z.array(z.object({ kind: z.string(), createdAt: out.instant })),
  agent: z.object({ profileUrl: z.string(), host: z.string() }).nullable(),
});

export const listOrders = storeProcedure({
  router: "orders",
  name: "list",
  description:
    "List the store's orders, newest first, with paging. Filter by status, paymentStatus, fulfillmentStatus, channel (online_store or ucp: placed by an AI agent) and placedFrom (inclusive) / placedTo (exclusive); query finds an order number (#1002 or 1002) or the orders whose email has words beginning with each of the query's words, ignoring case (\"sharma\" or \"priya sha\" find priya.sharma@example.com; words are split at punctuation and spaces); email keeps only the orders placed with exactly that address (a customer's orders). Totals are in minor units.",
  access: "orders.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, number: z.number().int(), email: z.string().nullable(), status: z.enum(ORDER_STATUSES), paymentStatus: z.enum(PAYMENT_STATUSES), fulfillmentStatus: z.enum(FULFILLMENT_STATUSES), channel: z.enum(ORDER_CHANNELS), currency: z.string(), total: out.minor, placedAt: out.instant })),
  input: listInput,
  read: (q, scope, input) => ordersPagePlan(q, scope, input),
});

/** orders.list's order, newest first: shop_order_list_idx's key. */
const NEWEST_FIRST = [desc(shopOrder.placedAt), desc(shopOrder.number)];

/**
 * A page of orders: the filters of orders.list, and `also` conditions a caller adds (a customer's orders).
 *
 * Every condition can be read from an index under RLS (docs/database.md "Scale"): the statuses and the
 * placed time are plain comparisons, the email filter is `email_lower = $x` (shop_order_email_lower_idx),
 * and the search is by words: each word of the query begins a word of the email (./search.ts, migration
 * 0030). A search alone is read from order_search_token in the list's order; beside other filters, each
 * order they find has its tokens probed. The page's orders are picked first and only their rows read, by (store_id, number);
 * the count reads the same way, up to its cap.
 */
function ordersPagePlan(q: Q, { store, contact }: Scope, input: OrdersInput, also: SQL[] = []) {
  const rows = (page: SQL) =>
    q
      .select({
        id: shopOrder.id,
        number: shopOrder.number,
        email: sql<string | null>`case when ${contact} then ${shopOrder.email} end`,
        status: shopOrder.status,
        paymentStatus: shopOrder.paymentStatus,
        fulfillmentStatus: shopOrder.fulfillmentStatus,
        channel: shopOrder.channel,
        currency: shopOrder.currency,
        total: shopOrder.total,
        placedAt: shopOrder.placedAt,
      })
      .from(shopOrder)
      .where(and(eq(shopOrder.storeId, store), sql`(${shopOrder.storeId}, ${shopOrder.number}) in ${page}`))
      .orderBy(...NEWEST_FIRST);
  const number = input.query ? ORDER_NUMBER.exec(input.query)?.[1] : undefined;
  const words = input.query && !input.query.startsWith("#") ? searchWords(input.query) : [];
  const [first, ...rest] = words;
  const onlySearched = !input.status && !input.paymentStatus && !input.fulfillmentStatus && !input.channel && !input.placedFrom && !input.placedTo && !input.email;
  // A search alone (the search box): the page and the count are found from the tokens (./search.ts), with
  // the order whose number the query is, and only the page's orders read. An AI client barred from customer details sees no
  // emails and cannot probe them by searching (`contact`).
  if (first !== undefined && onlySearched && also.length === 0) {
    const page = { limit: input.pageSize, offset: offsetOf(input) };
    const search = orderSearch(store, contact, [first, ...rest], page, number === undefined ? undefined : Number(number));
    return pagePlan(rows(search.page), orderSearchCount(q, store, contact, [first, ...rest], number === undefined ? undefined : Number(number)), input);
  }
  const conditions: (SQL | undefined)[] = [eq(shopOrder.storeId, store), ...also];
  if (input.status) conditions.push(eq(shopOrder.status, input.status));
  if (input.paymentStatus) conditions.push(eq(shopOrder.paymentStatus, input.paymentStatus));
  if (input.fulfillmentStatus) conditions.push(eq(shopOrder.fulfillmentStatus, input.fulfillmentStatus));
  if (input.channel) conditions.push(eq(shopOrder.channel, input.channel));
  if (input.placedFrom) conditions.push(gte(shopOrder.placedAt, input.placedFrom));
  if (input.placedTo) conditions.push(lt(shopOrder.placedAt, input.placedTo));
  // Exactly this address, ignoring case; an AI client barred from emails finds none.
  if (input.email) conditions.push(and(contact, eq(shopOrder.emailLower, input.email.toLowerCase())));
  if (input.query) {
    const byEmail = words.length ? and(contact, ...words.map((w) => orderHasWord(store, contact, sql`${shopOrder.placedAt}`, sql`${shopOrder.number}`, w))) : undefined;
    const byNumber = number ? eq(shopOrder.number, Number(number)) : undefined;
    conditions.push(byEmail || byNumber ? or(byNumber, byEmail) : sql`false`);
  }
  const where = and(...conditions);
  const page = q
    .select({ storeId: shopOrder.storeId, number: shopOrder.number })
    .from(shopOrder)
    .where(where)
    .orderBy(...NEWEST_FIRST)
    .limit(input.pageSize)
    .offset(offsetOf(input));
  return pagePlan(rows(sql`${page}`), q.select(countColumn()).from(shopOrder).where(where), input);
}

/**
 * The orders placed with exactly a customer's email (a customer's page), the email read in the same
 * statement: no round trip to learn it first.
 */
export function customerOrdersPlan(q: Q, scope: Scope, customerId: string, pageSize: number) {
  const email = sql`(select c.email_lower from customer c where c.store_id = ${scope.store} and c.id = ${customerId})`;
  return ordersPagePlan(q, scope, { page: 1, pageSize }, [and(scope.contact, sql`${shopOrder.emailLower} = ${email}`)!]);
}

/**
 * The orders holding stock while they wait for payment (decision 0020): open, nothing captured, the soonest
 * to release first, each with when its hold releases (the expiry job then asks the gateway and releases it
 * if still unpaid) and what is due now. Read from shop_order_unpaid_due_idx, whose key is that order.
 */
export const listHolds = storeProcedure({
  router: "orders",
  name: "holds",
  description:
    "Orders waiting for payment: open orders with nothing captured, each holding its stock until holdReleasesAt (then, still unpaid, its stock is released and it expires), the soonest first, with amountDue (minor units: the total, or a pre-order's deposit), paymentMethod and paymentStatus. Paged.",
  access: "orders.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, number: z.number().int(), email: z.string().nullable(), paymentMethod: z.enum(PAYMENT_METHODS), paymentStatus: z.enum(PAYMENT_STATUSES), currency: z.string(), total: out.minor, amountDue: out.minor, placedAt: out.instant, holdReleasesAt: out.instant.nullable() })),
  input: z.strictObject({ ...pagingInput }),
  read: (q, { store, contact }, input) => {
    // shop_order_unpaid_due_idx's own condition, written as it is so the planner picks that index.
    const holding = and(eq(shopOrder.storeId, store), sql`${shopOrder.status} = 'open' and ${shopOrder.paymentStatus} in ('unpaid', 'pending', 'authorized')`);
    const rows = q
      .select({
        id: shopOrder.id,
        number: shopOrder.number,
        email: sql<string | null>`case when ${contact} then ${shopOrder.email} end`,
        paymentMethod: shopOrder.paymentMethod,
        paymentStatus: shopOrder.paymentStatus,
        currency: shopOrder.currency,
        total: shopOrder.total,
        amountDue: sql<number>`(${shopOrder.total} - ${shopOrder.balanceAmount})::float8`,
        placedAt: shopOrder.placedAt,
        holdReleasesAt: shopOrder.expiresAt,
      })
      .from(shopOrder)
      .where(holding)
      .orderBy(asc(shopOrder.expiresAt), asc(shopOrder.id))
      .limit(input.pageSize)
      .offset(offsetOf(input));
    return pagePlan(rows, q.select(countColumn()).from(shopOrder).where(holding), input);
  },
});

export const getOrder = storeProcedure({
  router: "orders",
  name: "get",
  description:
    "One order by id: its channel (online_store, or ucp with the AI agent platform whose checkout session placed it as agent), money and parcels with their GST (CGST/SGST/IGST), the customer's email, phone and shipping address, lines, payment attempts (newest first), shipments with their tracking history, refunds, returns, merchant tasks and the timeline of its events (oldest first).",
  access: "orders.read",
  mutates: false,
  output: orderDetailOutput,
  customerDetails: true,
  input: z.strictObject({ id: orderId }),
  read: (q, { store }, input) => orderDetailPlan(q, store, input.id),
});

export const setOrderStatus = storeProcedure({
  router: "orders",
  name: "setStatus",
  description:
    "Record a payment made outside the gateway: action mark_paid captures the newest open payment attempt (or a new manual one for the balance) through the payment status routine, and the order becomes paid. Already paid: nothing changes. A cancelled or expired order is refused.",
  access: "orders.write",
  mutates: true,
  output: orderOutput,
  input: z.strictObject({ orderId, action: z.enum(["mark_paid"]) }),
  write: {
    prepare: (q, { store }, input) => markPaidReadingPlan(q, store, input.orderId),
    apply: (q, { store }, input, decision: MarkPaid) => markPaidPlan(q, store, input.orderId, decision),
  },
});

export const cancelOrderProcedure = storeProcedure({
  router: "orders",
  name: "cancel",
  description:
    "Cancel an open order that is not paid and has not shipped: its reserved stock is released at once. A paid order must be refunded first. Cancelling a cancelled order changes nothing.",
  access: "orders.cancel",
  mutates: true,
  output: orderOutput,
  input: z.strictObject({ orderId, reason: z.string().trim().min(1).max(500).optional().describe("Why; kept with the order.cancelled event") }),
  write: {
    prepare: (q, { store }, input) => cancelReadingPlan(q, store, input.orderId),
    apply: (q, { store }, input, decision: Cancel) => cancelPlan(q, store, input.orderId, input.reason, decision),
  },
});

export const orderProcedures = [listOrders, listHolds, getOrder, setOrderStatus, cancelOrderProcedure];
