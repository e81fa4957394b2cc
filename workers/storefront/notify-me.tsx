import type { Context } from "hono";
import { sql } from "#shared/db/steps";
import { sendStoreUnit } from "#shared/db/unit";
import { isAppError } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import { subscribeInput, subscribePlan } from "#shared/restock/subscribe";
import { renderProduct, type NotifyState } from "./catalog-pages";
import type { ShopEnv } from "./shop-env";

/**
 * `POST /products/<handle>/notify`: the "Email me when it is back" form of a sold-out product page
 * (docs/back-in-stock.md). The answer is the product page again, never cached, with the outcome in the
 * form: what was typed and each message by its field on a mistake (400), the reason when the variant is
 * in stock or the email waits for too many (409). A form sent from another site is refused, writing nothing
 * (notifyRefused, the answer of the same-site guard shop.tsx mounts).
 */
type ShopContext = Context<ShopEnv>;

/** What the form holds, and the form's state with it. */
async function formOf(c: ShopContext) {
  const form = await c.req.parseBody().catch(() => ({}) as Record<string, unknown>);
  const text = (name: string) => (typeof form[name] === "string" ? (form[name] as string).slice(0, 300) : undefined);
  const values = { variantId: text("variantId"), email: text("email") };
  return { values, state: (extra: Partial<NotifyState>): NotifyState => ({ values, errors: {}, ...extra }) };
}

/** A form sent from another site: the product page with what was typed and why nothing was done, 400. */
export async function notifyRefused(c: ShopContext) {
  const { state } = await formOf(c);
  return renderProduct(c, state({ problem: "This form must be sent from the store's own page." }), 400);
}

export async function notifyMe(c: ShopContext) {
  const { values, state } = await formOf(c);
  const parsed = subscribeInput.safeParse({ variantId: values.variantId ?? "", email: (values.email ?? "").trim() });
  if (!parsed.success) {
    const errors: NotifyState["errors"] = {};
    for (const issue of issuesOf(parsed.error)) if (issue.path === "variantId" || issue.path === "email") errors[issue.path] ??= issue.message;
    return renderProduct(c, state({ errors, problem: "Please check the highlighted field." }), 400);
  }
  const { db, store } = c.var.shop;
  try {
    const done = await sendStoreUnit(db, store.id, (q) => subscribePlan(q, sql`${store.id}::uuid`, parsed.data, c.req.param("handle")), { readOnly: false });
    const name = done.variantTitle === "Default" ? done.productTitle : `${done.productTitle} (${done.variantTitle})`;
    return renderProduct(c, state({ done: `We will email ${parsed.data.email.trim().toLowerCase()} once when ${name} is back.` }));
  } catch (e) {
    if (isAppError(e) && (e.code === "CONFLICT" || e.code === "NOT_FOUND")) return renderProduct(c, state({ problem: e.message }), e.code === "CONFLICT" ? 409 : 404);
    throw e;
  }
}
