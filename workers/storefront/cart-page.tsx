import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import { readCart } from "#shared/storefront/cart";
import { formatMoney } from "#shared/storefront/catalog";
import { CART_COOKIE } from "./cart";
import { Alert, EmptyCart, ShopPage } from "./layout";
import type { ShopEnv } from "./shop-env";

const CART_ERRORS: Record<string, string> = {
  insufficient_stock: "There is not that much in stock. The cart shows what is available.",
  unknown_code: "We don't know that discount code.",
  expired: "That discount code has expired.",
  scheduled: "That discount code is not valid yet.",
  used_up: "That discount code has been used up.",
  disabled: "That discount code is no longer offered.",
  not_for_sale: "That product is not for sale any more.",
  unknown_variant: "That product is not in this store.",
  unknown_line: "That line is no longer in your cart.",
  bad_request: "Check the quantity and try again.",
};

/** The shopper's cart (never cached, never indexed): lines with quantity forms, the code, the totals. */
export async function cartPage(c: Context<ShopEnv>) {
  const { store, db } = c.var.shop;
  const token = getCookie(c, CART_COOKIE);
  const cart = await readCart(db, store.id, token);
  const problem = c.req.query("cartError");
  const money = (minor: number) => formatMoney(minor, store.currency);
  c.header("cache-control", "no-store");
  return c.html(
    <ShopPage head={{ storeName: store.name, title: "Cart", description: `Your cart at ${store.name}.`, noindex: true }}>
      <h1>Cart</h1>
      <Alert message={problem ? (CART_ERRORS[problem] ?? "That did not work. Try again.") : undefined} />
      {cart.lines.length === 0 ? (
        <EmptyCart />
      ) : (
        <>
          <table>
            <thead>
              <tr>
                <th scope="col">Item</th>
                <th scope="col">Price</th>
                <th scope="col">Quantity</th>
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {cart.lines.map((l) => (
                <tr>
                  <td>
                    {l.productTitle} · {l.variantTitle}
                    {l.sku ? <span class="muted"> · {l.sku}</span> : null}
                  </td>
                  <td>{money(l.unitPrice)}</td>
                  <td>
                    <form method="post" action={`/api/cart/lines/${l.id}`} class="inline">
                      <input type="hidden" name="return" value="/cart" />
                      <label for={`qty-${l.id}`} class="visually-hidden">
                        Quantity of {l.productTitle} {l.variantTitle}
                      </label>
                      <input id={`qty-${l.id}`} name="quantity" type="number" min="0" max="999" value={String(l.quantity)} inputmode="numeric" />
                      <button type="submit">Update</button>
                    </form>
                    <form method="post" action={`/api/cart/lines/${l.id}`} class="inline">
                      <input type="hidden" name="return" value="/cart" />
                      <input type="hidden" name="_method" value="DELETE" />
                      <button type="submit" class="secondary" aria-label={`Remove ${l.productTitle} ${l.variantTitle}`}>
                        Remove
                      </button>
                    </form>
                  </td>
                  <td>{money(l.lineTotal)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <form method="post" action="/api/cart/discount" class="card">
            <input type="hidden" name="return" value="/cart" />
            <label for="code">Discount code</label>
            <input id="code" name="code" maxlength={40} value={cart.discountCode ?? ""} autocomplete="off" />
            <button type="submit">Apply</button>
          </form>
          {cart.discountCode ? (
            <form method="post" action="/api/cart/discount" class="inline">
              <input type="hidden" name="return" value="/cart" />
              <input type="hidden" name="_method" value="DELETE" />
              <button type="submit" class="secondary">
                Remove code {cart.discountCode}
              </button>
            </form>
          ) : null}
          <dl class="totals">
            <dt>Subtotal</dt>
            <dd data-total="subtotal">{money(cart.subtotal)}</dd>
            {cart.discount > 0 ? (
              <>
                <dt>Discount ({cart.discountCode})</dt>
                <dd data-total="discount">−{money(cart.discount)}</dd>
              </>
            ) : null}
            <dt>Total</dt>
            <dd data-total="total">
              <strong>{money(cart.total)}</strong>
            </dd>
          </dl>
          <p>
            <a href="/checkout" class="button">
              Check out
            </a>
          </p>
        </>
      )}
    </ShopPage>,
  );
}
