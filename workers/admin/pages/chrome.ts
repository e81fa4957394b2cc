import { me as staffMe } from "#shared/procedures/staff";
import { csrfOf, pageCall, requirePageSession, type AdminContext, type SignedIn } from "../context";
import type { Chrome } from "./layout";

/** What every store page needs first: the session, `staff.me` (the home guard), and the page chrome. */
export interface StorePage {
  signedIn: SignedIn;
  me: Awaited<ReturnType<typeof staffMe.run>>;
  chrome: Chrome;
}

export async function storePage(c: AdminContext): Promise<StorePage> {
  const signedIn = await requirePageSession(c);
  const me = await pageCall(c, signedIn, staffMe);
  c.header("cache-control", "no-store");
  return {
    signedIn,
    me,
    chrome: {
      storeName: me.store.name,
      roleLabel: me.member.roleLabel,
      email: signedIn.info.email,
      csrf: await csrfOf(signedIn),
      canSee: {
        products: me.permissions.includes("products.read"),
        inventory: me.permissions.includes("inventory.read"),
        orders: me.permissions.includes("orders.read"),
        customers: me.permissions.includes("customers.read"),
        discounts: me.permissions.includes("discounts.read"),
        pages: me.permissions.includes("content.read"),
        settings: me.permissions.includes("settings.read"),
        links: me.permissions.includes("content.read"),
        marketing: me.permissions.includes("customers.read"),
        team: me.permissions.includes("staff.read"),
      },
    },
  };
}
