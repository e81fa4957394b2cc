import type { SQL } from "drizzle-orm";
import { emitStep, ensureChanged, markEmits, unchanged } from "../db/changes";
import { AppError } from "../core/errors";
import { plan, type Plan } from "../db/plan";
import { paymentAttempt } from "../db/schema";
import { sql, type Q } from "../db/steps";
import { CONSENT_REQUEST_EVERY_HOURS } from "../marketing/consent";
import type { CheckoutInput, Placed } from "./checkout-input";
import { cartState } from "./checkout-reading";
import type { IndianStateCode, OrderMoney } from "../rules/gst";
import { holdLimitSteps } from "./holds";
import { orderViewStatement } from "./order-view";
import { convertCartForBuyer, insertOrder, insertOrderLines, insertParcelLines, insertParcels, type OrderLineRow, type ParcelLineRow, type ParcelRow } from "./statements/checkout";
import { lockStockRows } from "./statements/locks";

/**
 * The order placed from a decided checkout (./checkout.ts), as one unit of guarded statements. Its first
 * statements lock the cart, the stock rows it reserves (in id order) and the discount, and stop the unit
 * as a lost race (CR409) when any is no longer as the reading saw it; then everything is written in the
 * order a reader of the order expects: the order, its lines, its parcels and their lines with the
 * reservation, the first payment attempt, the cart converted with the buyer recorded, the events.
 */
export interface Placement {
  orderId: string;
  accessKey: string;
  accessKeyHash: string;
  cart: { id: string; currency: string; state: unknown };
  input: CheckoutInput;
  destination: IndianStateCode;
  money: OrderMoney;
  taken: { amount: number; code: string | null };
  discount: { id: string; kind: string; value: number } | null;
  balance: number;
  firstAmount: number;
  expiresAt: Date;
  now: Date;
  orderLines: OrderLineRow[];
  parcels: ParcelRow[];
  parcelLines: ParcelLineRow[];
  attemptId: string;
  provider: string;
  /** The store, and the buyer's network as the per-network hold limit counts it (./holds.ts; null: no address). */
  storeId: string;
  networkHash: string | null;
  /** The agent's UCP session this order completes, if any (./checkout.ts `Buyer`). */
  ucpSession: { id: string; webhookUrl: string | null } | null;
}

export const discountUnavailable = () =>
  new AppError("CONFLICT", "The discount code on your cart can no longer be used: remove it or try another.", {
    reason: "discount_unavailable",
    issues: [{ path: "discount", message: "no longer available" }],
  });

const json = (value: unknown) => sql`${JSON.stringify(value)}::jsonb`;

export function checkoutChange(q: Q, store: SQL, p: Placement): Plan<Placed> {
  const { orderId, input, money } = p;
  const reserved = p.parcelLines.filter((l) => l.reserved > 0);
  const wanted = reserved.map((l) => ({ id: l.stock_id, n: l.reserved }));
  const [first, ...rest] = input.shippingAddress.name.split(/\s+/);
  const consent = input.acceptsMarketing === true;
  return plan(
    [
      // The cart as read: not converted by a racing submit, nor changed in another tab.
      unchanged(q, sql`(${cartState(store, sql`${p.cart.id}::uuid`, true)}) = ${json(p.cart.state)}`),
      // The stock rows it reserves, locked in id order, still holding what it takes at a location that sells online.
      lockStockRows(q, store, wanted.flatMap((w) => (w.id ? [w.id] : []))),
      unchanged(
        q,
        sql`(select count(*) from jsonb_to_recordset(${json(wanted)}) as x(id uuid, n int)
             join inventory_level il on il.store_id = ${store} and il.id = x.id
             join location l on l.store_id = il.store_id and l.id = il.location_id and l.sells_online
             where greatest(il.on_hand - il.reserved, 0) >= x.n) = ${wanted.length}`,
      ),
      ...(p.discount
        ? [
            unchanged(q, sql`exists (select 1 from discount where store_id = ${store} and id = ${p.discount.id} and kind = ${p.discount.kind} and value = ${p.discount.value} for update)`),
            // Its use counted while it is still live (a code used up by a racing checkout is refused).
            ensureChanged(
              q,
              sql`update discount set usage_count = usage_count + 1, updated_at = now()
                  where store_id = ${store} and id = ${p.discount.id} and status = 'active' and starts_at <= now() and (ends_at is null or ends_at > now())
                    and (usage_limit is null or usage_count < usage_limit) returning 1`,
              discountUnavailable(),
            ),
          ]
        : []),
      // At most 3 open unpaid orders per email and per network hold this store's stock (./holds.ts).
      ...holdLimitSteps(q, store, { storeId: p.storeId, email: input.email, networkHash: p.networkHash, now: p.now }),
      insertOrder(q, store, {
        orderId,
        cartId: p.cart.id,
        email: input.email.toLowerCase(),
        phone: input.phone ?? null,
        shippingAddress: input.shippingAddress,
        destination: p.destination,
        paymentMethod: input.paymentMethod,
        currency: p.cart.currency,
        money,
        discountCode: p.taken.code,
        expiresAt: p.expiresAt,
        now: p.now,
        accessKeyHash: p.accessKeyHash,
        balance: p.balance,
        discountId: p.discount?.id ?? null,
        networkHash: p.networkHash,
        buyerGstin: input.gstin ?? null,
        buyerLegalName: input.legalName ?? null,
        channel: p.ucpSession ? "ucp" : "online_store",
      }),
      // An agent's session takes its order once: a session that has one already stops the unit (a lost race).
      ...(p.ucpSession
        ? [
            ensureChanged(
              q,
              sql`update ucp_checkout_session set order_id = ${orderId}, webhook_url = ${p.ucpSession.webhookUrl}, status = 'requires_escalation', updated_at = now(),
                    expires_at = greatest(expires_at, now() + interval '30 days')
                  where store_id = ${store} and id = ${p.ucpSession.id} and order_id is null and status not in ('completed', 'canceled') returning 1`,
              new AppError("CONFLICT", "This checkout session was completed or cancelled meanwhile.", { reason: "session_ended" }),
            ),
          ]
        : []),
      insertOrderLines(q, store, orderId, p.orderLines),
      insertParcels(q, store, orderId, p.parcels),
      insertParcelLines(q, store, p.parcelLines),
      q.insert(paymentAttempt).values({ id: p.attemptId, storeId: store, orderId, attempt: 1, idempotencyKey: `${orderId}:1`, provider: p.provider, amount: p.firstAmount }),
      // Every order's buyer is one of the store's customers, found by email (case ignored), in one statement
      // with the cart's conversion (docs/marketing.md): a new buyer is added with the checkout's name, phone
      // and city; a known one keeps everything the merchant has on file. Ticking "Email me news and offers"
      // only asks (double opt-in, decision 0021): it opens a consent request that the confirmation email's
      // link confirms, for a customer who never gave consent, or whose request went unanswered for a day
      // (so a loop of checkouts mails one address at most once a day). A confirmed consent stays as it is;
      // a withdrawn one stays withdrawn. Not ticking never withdraws anything. Events only for real changes.
      markEmits(
        convertCartForBuyer(q, store, {
          orderId,
          cartId: p.cart.id,
          email: input.email.toLowerCase(),
          firstName: first?.slice(0, 120) || null,
          lastName: rest.join(" ").slice(0, 120) || null,
          phone: input.phone ?? null,
          city: input.shippingAddress.city.slice(0, 120),
          consent,
          consentEveryHours: CONSENT_REQUEST_EVERY_HOURS,
        }),
      ),
      emitStep(
        q,
        "order.placed",
        sql`(select jsonb_build_object('orderId', id, 'number', number, 'total', total, 'paymentMethod', payment_method)
               || ${json(p.balance > 0 ? { deposit: p.firstAmount, balance: p.balance } : {})}
             from shop_order where store_id = ${store} and id = ${orderId})`,
      ),
      emitStep(q, "inventory.reserved", { orderId, items: reserved.map((l) => ({ variantId: l.variant_id, locationId: l.location_id, quantity: l.reserved })) }),
      orderViewStatement(q, store, orderId),
    ],
    (results) => {
      const [view] = results.at(-1) as { order: Placed["order"] }[];
      return {
        order: view!.order,
        attempt: { id: p.attemptId, attempt: 1, idempotencyKey: `${orderId}:1`, status: "created", provider: p.provider, amount: p.firstAmount },
        replayed: false,
        accessKey: p.accessKey,
      };
    },
  );
}
