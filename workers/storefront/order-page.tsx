import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { withStore } from "#shared/db/with-store";
import { loadOrderView } from "#shared/orders/order-view";
import { isBuyer } from "#shared/orders/payments";
import { formatMoney } from "#shared/storefront/catalog";
import { CART_COOKIE } from "./cart";
import { notFoundPage } from "./catalog-pages";
import { ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

type ShopContext = Context<ShopEnv>;

/** The buyer's order page: only from the browser whose cart became the order. */
export async function orderPage(c: ShopContext) {
  const { store, db } = c.var.shop;
  const orderId = c.req.param("orderId") ?? "";
  const found = /^[0-9a-f-]{36}$/.test(orderId)
    ? await withStore(
        db,
        store.id,
        async (tx) => {
          if (!(await isBuyer(tx, orderId, getCookie(c, CART_COOKIE)))) return null;
          const order = await loadOrderView(tx, orderId);
          const { rows } = await tx.$client.query<{ status: string; payment_method: string }>(
            `select a.status, o.payment_method from payment_attempt a join shop_order o on o.store_id = a.store_id and o.id = a.order_id
             where a.store_id = $1 and a.order_id = $2 order by a.attempt desc limit 1`,
            [tx.storeId, orderId],
          );
          return order ? { order, attempt: rows[0] } : null;
        },
        { readOnly: true },
      )
    : null;
  if (!found) return notFoundPage(c);
  const { order, attempt } = found;
  const money = (minor: number) => formatMoney(minor, order.currency);
  const canPay = order.status === "open" && attempt?.payment_method === "gateway" && ["unpaid", "pending"].includes(order.paymentStatus);
  c.header("cache-control", "no-store");
  return c.html(
    <ShopPage head={{ storeName: store.name, title: `Order #${order.number}`, description: `Your order at ${store.name}.`, noindex: true }}>
      <h1>Order #{order.number}</h1>
      <p>
        Thank you for your order. We will write to <strong>{order.email}</strong> about it.
      </p>
      <dl class="totals">
        <dt>Order</dt>
        <dd data-status="order">{order.status}</dd>
        <dt>Payment</dt>
        <dd data-status="payment">{order.paymentStatus.replace("_", " ")}</dd>
        <dt>Shipping</dt>
        <dd data-status="fulfillment">{order.fulfillmentStatus.replace("_", " ")}</dd>
      </dl>
      {attempt?.status === "failed" ? (
        <p class="alert" role="alert">
          Your last payment did not go through. Your order is kept: you can pay again.
        </p>
      ) : null}
      {canPay ? (
        <form method="post" action={`/api/checkout/${order.id}/pay`}>
          <button type="submit">Pay now</button>
        </form>
      ) : null}
      <h2>Parcels</h2>
      <ol>
        {order.parcels.map((p) => (
          <li>
            {money(p.subtotal - p.discount + p.shipping)} (GST {money(p.tax)}: {p.igst > 0 ? `IGST ${money(p.igst)}` : `CGST ${money(p.cgst)} + SGST ${money(p.sgst)}`})
          </li>
        ))}
      </ol>
      <dl class="totals">
        <dt>Subtotal</dt>
        <dd>{money(order.subtotal)}</dd>
        {order.discount > 0 ? (
          <>
            <dt>Discount</dt>
            <dd>−{money(order.discount)}</dd>
          </>
        ) : null}
        <dt>Shipping</dt>
        <dd>{money(order.shipping)}</dd>
        <dt>Total (incl. GST {money(order.tax)})</dt>
        <dd data-total="order">
          <strong>{money(order.total)}</strong>
        </dd>
      </dl>
    </ShopPage>,
  );
}
