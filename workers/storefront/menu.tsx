import { tryGetContext } from "hono/context-storage";
import type { FC } from "hono/jsx";
import type { MenuLink } from "#shared/storefront/menu";
import type { ShopEnv } from "./shop-env";

/**
 * The store's navigation menu in every page's header (issue 23 item 3; docs/collections.md). It rides with
 * the store's held facts, as the theme does (./theme.tsx), so no page reads it: the shell finds it through
 * the request's context (hono's context storage, set on the internal app in shop.tsx).
 */
function menuOfRequest(): { links: MenuLink[]; path: string } {
  const shop = tryGetContext<ShopEnv>()?.var.shop;
  return { links: shop?.store.menu ?? [], path: (shop?.asked ?? "").split(/[?#]/)[0] ?? "" };
}

/** A list of links in the merchant's order; the page the shopper is on is marked as the current one. */
export const StoreMenu: FC = () => {
  const { links, path } = menuOfRequest();
  if (links.length === 0) return null;
  return (
    <nav class="menu" aria-label="Menu">
      <ul>
        {links.map((l) => (
          <li>
            <a href={l.href} aria-current={l.href === path ? "page" : undefined}>
              {l.label}
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
};
