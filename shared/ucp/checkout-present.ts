import type { UcpCheckout } from "./checkout-session-view";
import { continuePath } from "./profile";
import { sessionOrderPath } from "./session-cart";

/**
 * A session as it is sent to the agent, over REST or MCP alike: the store's links as absolute URLs on the domain
 * the agent reached, and where a person takes over. An open session's `continue_url` is its hand-off page
 * (`/cart/session/<id>`); a session whose order waits for payment (`requires_escalation`) sends the buyer to the
 * order's page, where "Pay now" goes on to the store's gateway; a completed session names its order with that
 * page as `permalink_url`. Finished sessions carry no `continue_url`, as the specification asks.
 */
export interface Presenting {
  /** `https://<the store's domain the agent reached>`. */
  origin: string;
  storeId: string;
  /** UCP_SIGNING_ROOT_SECRET: the order's link derives from it (./session-cart.ts). */
  rootSecret: string;
}

export type PresentedCheckout = UcpCheckout & { continue_url?: string };

export async function presentCheckout(answer: { checkout: UcpCheckout; orderId?: string | undefined }, o: Presenting): Promise<PresentedCheckout> {
  const { checkout } = answer;
  const shown: PresentedCheckout = { ...checkout, links: checkout.links.map((l) => ({ ...l, url: l.url.startsWith("/") ? `${o.origin}${l.url}` : l.url })) };
  if (answer.orderId) {
    const orderUrl = `${o.origin}${await sessionOrderPath(o.rootSecret, o.storeId, checkout.id, answer.orderId)}`;
    if (checkout.status === "completed" && checkout.order) return { ...shown, order: { ...checkout.order, permalink_url: orderUrl } };
    if (checkout.status === "requires_escalation") return { ...shown, continue_url: orderUrl };
    return shown;
  }
  if (checkout.status === "completed" || checkout.status === "canceled") return shown;
  return { ...shown, continue_url: `${o.origin}${continuePath(checkout.id)}` };
}
