import type { FC } from "hono/jsx";
import { formatMoney, type ProductCard } from "#shared/storefront/catalog";

/**
 * A list of products as every storefront page shows one (home, products, search, collections): each card
 * links to its product, with its price. One component, so a change to the cards reaches every list.
 */
export const Price: FC<{ minor: number; currency: string; from?: boolean }> = ({ minor, currency, from }) => (
  <span class="price">
    {from ? "From " : ""}
    {formatMoney(minor, currency)}
  </span>
);

export const Cards: FC<{ items: ProductCard[]; currency: string }> = ({ items, currency }) => (
  <ul class="grid">
    {items.map((p) => (
      <li>
        <a href={`/products/${p.handle}`}>
          <strong>{p.title}</strong>
        </a>
        <br />
        <Price minor={p.fromPrice} currency={currency} from />
        {p.available ? null : <span class="soldout"> · Sold out</span>}
      </li>
    ))}
  </ul>
);
