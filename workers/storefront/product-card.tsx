import type { FC } from "hono/jsx";
import { formatMoney, type ProductCard } from "#shared/storefront/catalog";
import { ProductPicture } from "./media";

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

/** What a card says of the product at a glance: on sale, sold out, or only on pre-order. */
export const Badge: FC<{ p: Pick<ProductCard, "available" | "onSale" | "preorderOnly"> }> = ({ p }) =>
  !p.available ? <span class="badge soldout">Sold out</span> : p.preorderOnly ? <span class="badge pre">Pre-order</span> : p.onSale ? <span class="badge sale">Sale</span> : null;

export const Cards: FC<{ items: ProductCard[]; currency: string }> = ({ items, currency }) => (
  <ul class="grid cards">
    {items.map((p) => (
      <li>
        <a href={`/products/${p.handle}`}>
          {p.image ? <ProductPicture image={p.image} sizes="(min-width: 60rem) 14rem, (min-width: 30rem) 33vw, 50vw" /> : null}
          <strong>{p.title}</strong>
        </a>
        <p class="card-price">
          <Price minor={p.fromPrice} currency={currency} from />
          {p.compareAt ? (
            <>
              {" "}
              <s class="compare">
                <span class="visually-hidden">was </span>
                {formatMoney(p.compareAt, currency)}
              </s>
            </>
          ) : null}
        </p>
        <Badge p={p} />
      </li>
    ))}
  </ul>
);
