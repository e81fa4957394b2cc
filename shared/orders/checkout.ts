import { z } from "zod";
import { sha256Hex } from "../auth/tokens";
import { emit } from "../db/outbox";
import type { TaxClass } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { orderAccessKey } from "./access";
import { CART_TOKEN } from "../storefront/cart";
import { discountAmount } from "../storefront/cart-totals";
import { indianStateSchema, isIndianStateCode, orderMoney, type IndianStateCode } from "./gst";
import { ratesOn } from "./gst-rates";
import { loadOrderView, type OrderView } from "./order-view";
import { preorderBalance } from "./preorders";
import { planReservation, type StockRow } from "./reservation";

/**
 * Checkout (SPEC "Checkout and payment behaviour" 1-4; ARCHITECTURE §15), the part inside one store
 * transaction: lock the cart, answer its order again if it was converted (a replay), else read the lines,
 * lock the variants' stock rows in id order, plan the parcels, take the discount, reserve, and write the
 * order, its lines, its parcels with their money and GST, and its first payment attempt, plus the
 * `order.placed` and `inventory.reserved` events. The caller commits, then calls the gateway.
 */
const E164 = /^\+[1-9][0-9]{7,14}$/;
const text = (max: number) => z.string().trim().min(1, "is required").max(max);

export const checkoutInput = z.strictObject({
  email: z.email("must be an email address").max(254),
  phone: z.string().trim().regex(E164, "must be an E.164 phone number such as +919876543210").optional(),
  shippingAddress: z.strictObject({
    name: text(200),
    line1: text(200),
    line2: z.string().trim().max(200).optional(),
    city: text(100),
    state: indianStateSchema,
    postalCode: z.string().trim().regex(/^[1-9][0-9]{5}$/, "must be a 6-digit PIN code"),
    country: z.literal("IN", { error: "must be IN: this store ships within India" }),
  }),
  paymentMethod: z.enum(["gateway", "manual_transfer"]),
  acceptsMarketing: z.boolean().optional().describe("The shopper ticked 'Email me news and offers' (never pre-ticked)"),
});
export type CheckoutInput = z.infer<typeof checkoutInput>;

/** How long a placed order waits for its payment before the expiry job releases its stock. */
export const PAYMENT_WINDOW_MS = { gateway: 30 * 60_000, manual_transfer: 3 * 86_400_000 } as const;

export interface AttemptRow {
  id: string;
  attempt: number;
  idempotencyKey: string;
  status: string;
  provider: string;
  amount: number;
}

export interface Placed {
  order: OrderView;
  attempt: AttemptRow;
  replayed: boolean;
  /** The order's access key (`/orders/<id>?k=<key>`), the same on a replay; only its hash is stored. */
  accessKey: string;
}

const emptyCart = () => new AppError("CONFLICT", "Your cart is empty: add a product before checking out.", { reason: "empty_cart" });

type CartLineRow = {
  line_id: string;
  variant_id: string;
  quantity: number;
  product_title: string;
  variant_title: string;
  sku: string | null;
  tax_class: string;
  preorder: boolean;
  unit_price: string;
  product_status: string;
};

export async function placeOrder(tx: StoreTx, cartToken: string | undefined, input: CheckoutInput, provider: string, now: Date): Promise<Placed> {
  if (!cartToken || !CART_TOKEN.test(cartToken)) throw emptyCart();
  const q = <R extends Record<string, unknown>>(sql: string, params: unknown[] = []) => tx.$client.query<R>(sql, params).then((r) => r.rows);

  // The cart row, locked: concurrent submits of one cart queue here, and all but the first find it converted.
  const [cart] = await q<{ id: string; currency: string; discount_id: string | null; converted_order_id: string | null }>(
    "select id, currency, discount_id, converted_order_id from cart where store_id = $1 and token_hash = $2 for update",
    [tx.storeId, await sha256Hex(cartToken)],
  );
  if (!cart) throw emptyCart();
  if (cart.converted_order_id) return replay(tx, cart.converted_order_id, await orderAccessKey(cartToken, cart.converted_order_id));

  const lines = await q<CartLineRow>(
    `select cl.id as line_id, cl.variant_id, cl.quantity, p.title as product_title, v.title as variant_title, v.sku, v.tax_class,
            v.preorder, v.price_minor::text as unit_price, p.status as product_status
     from cart_line cl
     join product_variant v on v.store_id = cl.store_id and v.id = cl.variant_id
     join product p on p.store_id = v.store_id and p.id = v.product_id
     where cl.store_id = $1 and cl.cart_id = $2
     order by cl.created_at, cl.id`,
    [tx.storeId, cart.id],
  );
  if (lines.length === 0) throw emptyCart();
  const gone = lines.filter((l) => l.product_status !== "active");
  if (gone.length > 0) {
    throw new AppError("CONFLICT", "Some products in your cart are no longer for sale: remove them and try again.", {
      reason: "not_for_sale",
      issues: gone.map((l) => ({ path: `lines.${l.line_id}`, message: `${l.product_title} is no longer for sale` })),
    });
  }

  // The stock rows of every variant in the cart at locations that sell online, locked in id order (a fixed
  // order, so two checkouts never wait on each other in a cycle).
  const variantIds = [...new Set(lines.map((l) => l.variant_id))];
  const stock = await q<{ id: string; variant_id: string; location_id: string; name: string; priority: number; available: number; state: string | null }>(
    `select il.id, il.variant_id, il.location_id, l.name, l.priority, greatest(il.on_hand - il.reserved, 0)::int as available, l.state
     from inventory_level il join location l on l.store_id = il.store_id and l.id = il.location_id
     where il.store_id = $1 and il.variant_id = any($2::uuid[]) and l.sells_online
     order by il.id for update of il`,
    [tx.storeId, variantIds],
  );
  const rows: StockRow[] = stock.map((s) => ({ locationId: s.location_id, locationName: s.name, priority: s.priority, variantId: s.variant_id, available: s.available }));
  const plan = planReservation(lines.map((l) => ({ variantId: l.variant_id, quantity: l.quantity, preorder: l.preorder })), rows);
  if (!plan.ok) {
    const byVariant = new Map(plan.short.map((s) => [s.variantId, s]));
    throw new AppError("CONFLICT", "Some products in your cart are no longer available in that quantity.", {
      reason: "insufficient_stock",
      issues: lines
        .filter((l) => byVariant.has(l.variant_id))
        .map((l) => {
          const s = byVariant.get(l.variant_id)!;
          return { path: `lines.${l.line_id}.quantity`, message: `only ${s.available} available`, available: s.available, requested: s.requested };
        }),
    });
  }

  const subtotal = lines.reduce((sum, l) => sum + Number(l.unit_price) * l.quantity, 0);
  const taken = await takeDiscount(tx, cart.discount_id, subtotal);
  const [settings] = await q<{ fee: string; free_over: string | null; deposit_percent: number }>(
    "select shipping_fee_minor::text as fee, free_shipping_over_minor::text as free_over, preorder_deposit_percent as deposit_percent from store where id = $1",
    [tx.storeId],
  );
  const afterDiscount = subtotal - taken.amount;
  const shipping = settings!.free_over !== null && afterDiscount >= Number(settings!.free_over) ? 0 : Number(settings!.fee);

  // Money: each parcel's lines (a cart line may be split over parcels), then the order's discount and
  // shipping split by parcel subtotal and the GST inside each parcel (shared/orders/gst.ts).
  const lineOf = new Map(lines.map((l) => [l.variant_id, l]));
  const stateOf = new Map(stock.map((s) => [s.location_id, s.state]));
  const destination = input.shippingAddress.state as IndianStateCode;
  const money = orderMoney({
    parcels: plan.parcels.map((p) => ({
      originState: originOf(stateOf.get(p.locationId)),
      lines: p.lines.map((pl) => {
        const l = lineOf.get(pl.variantId)!;
        return { taxClass: l.tax_class as TaxClass, amount: Number(l.unit_price) * pl.quantity };
      }),
    })),
    discount: taken.amount,
    shipping,
    destinationState: destination,
    rates: await ratesOn(tx, now),
  });
  // With a deposit under 100 %, backordered pre-order units are paid in part now, the balance when they arrive.
  const balanceParts = plan.parcels.flatMap((p, i) =>
    p.lines.map((pl, j) => ({ value: Number(lineOf.get(pl.variantId)!.unit_price) * pl.quantity - money.parcels[i]!.lineDiscounts[j]!, quantity: pl.quantity, backordered: pl.quantity - pl.reserved })),
  );
  const balance = preorderBalance(balanceParts, settings!.deposit_percent);
  const firstAmount = money.total - balance;

  const [counter] = await q<{ number: number }>(
    `insert into order_counter as c (store_id, next_number) values ($1, 1002)
     on conflict (store_id) do update set next_number = c.next_number + 1 returning next_number - 1 as number`,
    [tx.storeId],
  );
  const expiresAt = new Date(now.getTime() + PAYMENT_WINDOW_MS[input.paymentMethod]);
  // The id is made here so the access key, derived from it, is stored with the order in one statement.
  const orderId = crypto.randomUUID();
  const accessKey = await orderAccessKey(cartToken, orderId);
  await q(
    `insert into shop_order (id, store_id, number, cart_id, email, phone, shipping_address, ship_to_state, payment_method, currency,
       subtotal, discount, shipping, tax, total, discount_code, expires_at, placed_at, access_key_hash, balance_amount)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)`,
    [
      orderId, tx.storeId, counter!.number, cart.id, input.email.toLowerCase(), input.phone ?? null, JSON.stringify(input.shippingAddress), destination,
      input.paymentMethod, cart.currency, money.subtotal, money.discount, money.shipping, money.tax, money.total, taken.code, expiresAt, now,
      await sha256Hex(accessKey), balance,
    ],
  );

  // Each cart line's discount is the sum of its shares in the parcels that carry it.
  const lineDiscount = new Map<string, number>();
  plan.parcels.forEach((p, i) =>
    p.lines.forEach((pl, j) => lineDiscount.set(pl.variantId, (lineDiscount.get(pl.variantId) ?? 0) + money.parcels[i]!.lineDiscounts[j]!)),
  );
  const insertedLines = await q<{ id: string; variant_id: string }>(
    `insert into order_line (store_id, order_id, variant_id, product_title, variant_title, sku, tax_class, preorder, quantity, unit_price, line_total, discount, position)
     select $1, $2, x.variant_id, x.product_title, x.variant_title, x.sku, x.tax_class, x.preorder, x.quantity, x.unit_price, x.unit_price * x.quantity, x.discount, x.position
     from jsonb_to_recordset($3::jsonb) as x(variant_id uuid, product_title text, variant_title text, sku text, tax_class text, preorder boolean,
       quantity int, unit_price bigint, discount bigint, position int)
     returning id, variant_id`,
    [
      tx.storeId,
      orderId,
      JSON.stringify(
        lines.map((l, position) => ({
          variant_id: l.variant_id, product_title: l.product_title, variant_title: l.variant_title, sku: l.sku, tax_class: l.tax_class,
          preorder: l.preorder, quantity: l.quantity, unit_price: Number(l.unit_price), discount: lineDiscount.get(l.variant_id) ?? 0, position,
        })),
      ),
    ],
  );
  const orderLineOf = new Map(insertedLines.map((l) => [l.variant_id, l.id]));
  const parcels = await q<{ id: string; position: number }>(
    `insert into fulfillment_order (store_id, order_id, location_id, origin_state, subtotal, discount, shipping, tax, cgst, sgst, igst, position)
     select $1, $2, x.location_id, x.origin_state, x.subtotal, x.discount, x.shipping, x.tax, x.cgst, x.sgst, x.igst, x.position
     from jsonb_to_recordset($3::jsonb) as x(location_id uuid, origin_state text, subtotal bigint, discount bigint, shipping bigint,
       tax bigint, cgst bigint, sgst bigint, igst bigint, position int)
     returning id, position`,
    [
      tx.storeId,
      orderId,
      JSON.stringify(
        plan.parcels.map((p, position) => {
          const m = money.parcels[position]!;
          return { location_id: p.locationId, origin_state: stateOf.get(p.locationId) ?? null, subtotal: m.subtotal, discount: m.discount, shipping: m.shipping, tax: m.tax, cgst: m.cgst, sgst: m.sgst, igst: m.igst, position };
        }),
      ),
    ],
  );
  const parcelAt = new Map(parcels.map((p) => [p.position, p.id]));
  const parcelLines = plan.parcels.flatMap((p, position) =>
    p.lines.map((pl) => ({ fulfillment_order_id: parcelAt.get(position)!, order_line_id: orderLineOf.get(pl.variantId)!, quantity: pl.quantity, reserved: pl.reserved, variant_id: pl.variantId, location_id: p.locationId })),
  );
  await q(
    `with x as (select * from jsonb_to_recordset($2::jsonb) as x(fulfillment_order_id uuid, order_line_id uuid, quantity int, reserved int, variant_id uuid, location_id uuid)),
     lines as (insert into fulfillment_order_line (store_id, fulfillment_order_id, order_line_id, quantity, reserved, backordered)
               select $1, fulfillment_order_id, order_line_id, quantity, reserved, quantity - reserved from x)
     update inventory_level il set reserved = il.reserved + x.reserved, updated_at = now()
     from x where il.store_id = $1 and il.variant_id = x.variant_id and il.location_id = x.location_id and x.reserved > 0`,
    [tx.storeId, JSON.stringify(parcelLines)],
  );
  const [attempt] = await q<{ id: string }>(
    "insert into payment_attempt (store_id, order_id, attempt, idempotency_key, provider, amount) values ($1, $2, 1, $3, $4, $5) returning id",
    [tx.storeId, orderId, `${orderId}:1`, input.paymentMethod === "gateway" ? provider : "manual_transfer", firstAmount],
  );
  await convertCartAndRecordBuyer(tx, input, cart.id, orderId);
  const deposit = balance > 0 ? { deposit: firstAmount, balance } : {};
  await emit(tx, "order.placed", { orderId, number: counter!.number, total: money.total, paymentMethod: input.paymentMethod, ...deposit });
  await emit(tx, "inventory.reserved", {
    orderId,
    items: parcelLines.filter((l) => l.reserved > 0).map((l) => ({ variantId: l.variant_id, locationId: l.location_id, quantity: l.reserved })),
  });
  return {
    order: (await loadOrderView(tx, orderId))!,
    attempt: {
      id: attempt!.id, attempt: 1, idempotencyKey: `${orderId}:1`, status: "created", provider: input.paymentMethod === "gateway" ? provider : "manual_transfer", amount: firstAmount,
    },
    replayed: false,
    accessKey,
  };
}

const originOf = (state: string | null | undefined): IndianStateCode | null => (state && isIndianStateCode(state) ? state : null);

/**
 * The order of a converted cart with its newest payment attempt and its key. An order placed before keys
 * existed gets its hash now: the shopper proved the cart token the key is derived from.
 */
async function replay(tx: StoreTx, orderId: string, accessKey: string): Promise<Placed> {
  const order = await loadOrderView(tx, orderId);
  const { rows } = await tx.$client.query<{ id: string; attempt: number; idempotency_key: string; status: string; provider: string; amount: string }>(
    `with keyed as (update shop_order set access_key_hash = $3 where store_id = $1 and id = $2 and access_key_hash is null)
     select id, attempt, idempotency_key, status, provider, amount::text from payment_attempt where store_id = $1 and order_id = $2 order by attempt desc limit 1`,
    [tx.storeId, orderId, await sha256Hex(accessKey)],
  );
  const a = rows[0];
  if (!order || !a) throw new AppError("NOT_FOUND", "That order no longer exists.");
  return { order, attempt: { id: a.id, attempt: a.attempt, idempotencyKey: a.idempotency_key, status: a.status, provider: a.provider, amount: Number(a.amount) }, replayed: true, accessKey };
}

/**
 * The cart's discount, taken for this order: its row locked, still live, and its use counted. A code that
 * stopped being live since it was applied is refused (the shopper sees the price they will pay).
 */
async function takeDiscount(tx: StoreTx, discountId: string | null, subtotal: number): Promise<{ amount: number; code: string | null }> {
  if (!discountId) return { amount: 0, code: null };
  const { rows } = await tx.$client.query<{ code: string; kind: "percentage" | "fixed_amount"; value: string }>(
    `update discount set usage_count = usage_count + 1, updated_at = now()
     where store_id = $1 and id = $2 and status = 'active' and starts_at <= now() and (ends_at is null or ends_at > now())
       and (usage_limit is null or usage_count < usage_limit)
     returning code, kind, value::text`,
    [tx.storeId, discountId],
  );
  const d = rows[0];
  if (!d) {
    throw new AppError("CONFLICT", "The discount code on your cart can no longer be used: remove it or try another.", {
      reason: "discount_unavailable",
      issues: [{ path: "discount", message: "no longer available" }],
    });
  }
  return { amount: discountAmount(subtotal, { kind: d.kind, value: Number(d.value) }), code: d.code };
}

/**
 * Every order's buyer is one of the store's customers, found by email (case ignored), in the order's
 * transaction and one statement (docs/marketing.md). A new buyer is added with the checkout's name, phone and
 * city; a known one keeps what the merchant has on file. "Email me news and offers" ticked gives consent,
 * recorded as from checkout; not ticking never withdraws a consent given before (that is the unsubscribe
 * link's job). Events only for a real change: customer.created, or customer.updated when consent is new.
 * The same statement marks the cart converted to the order, so a checkout pays no extra round trip for it.
 */
async function convertCartAndRecordBuyer(tx: StoreTx, input: CheckoutInput, cartId: string, orderId: string): Promise<void> {
  const [first, ...rest] = input.shippingAddress.name.split(/\s+/);
  const consent = input.acceptsMarketing === true;
  const { rows } = await tx.$client.query<{ id: string; created: boolean }>(
    `with converted as (update cart set converted_order_id = $8, updated_at = now() where store_id = $1 and id = $9)
     insert into customer (store_id, email, first_name, last_name, phone, city, accepts_marketing, marketing_consent_updated_at, marketing_consent_source)
     values ($1, $2, $3, $4, $5, $6, $7::boolean, case when $7::boolean then now() end, case when $7::boolean then 'checkout' end)
     on conflict (store_id, lower(email)) where email is not null do update set
       accepts_marketing = true, updated_at = now(), marketing_consent_updated_at = now(), marketing_consent_source = 'checkout'
       where $7::boolean and not customer.accepts_marketing
     returning id, (xmax = 0) as created`,
    [
      tx.storeId, input.email.toLowerCase(), first?.slice(0, 120) || null, rest.join(" ").slice(0, 120) || null, input.phone ?? null,
      input.shippingAddress.city.slice(0, 120), consent, orderId, cartId,
    ],
  );
  const row = rows[0];
  if (!row) return;
  await emit(tx, row.created ? "customer.created" : "customer.updated", { customerId: row.id, ...(row.created ? {} : { fields: ["acceptsMarketing"] }), source: "checkout" });
}
