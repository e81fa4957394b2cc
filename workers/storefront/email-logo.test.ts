import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createLogger } from "#shared/core/log";
import { emailLinkSecretFromEnv } from "#shared/mail/links";
import { localMailer } from "#shared/mail/local";
import { sendNotification } from "#shared/notifications/send";
import { call } from "../../test/call";
import { testDb } from "../../test/harness";
import { base64, makePng } from "../../test/media";
import { orderShop, placeTestOrder } from "../../test/orders";
import { callerFor } from "../../test/procedures";
import worker from "./index";

/**
 * The store's published logo at the top of a shopper's email (shared/notifications/send.ts): read in the
 * message's own statement, its JPEG on the store's domain at a width sharp on a 2x screen, a URL the mail
 * client can load from the storefront; a store with no published logo shows its name.
 */
const db = testDb();
const deps = {
  db,
  log: createLogger({ test: true }, "error"),
  mail: { mailer: localMailer(db), fromDomain: "mail.test" },
  linkSecret: emailLinkSecretFromEnv(env as unknown as Record<string, unknown>),
};

/** A shop named `name` with a placed order, its confirmation email sent: the email's HTML and text. */
async function confirmationEmail(name: string, logo: "published" | "draft" | "none") {
  const { s, sql } = await orderShop(db);
  await sql("update store set name = $1 where id = $2", [name, s.id]);
  const owner = callerFor(db, s.ownerUserId, s.id, { media: () => ({ bucket: (env as Cloudflare.StorefrontEnv).MEDIA, allowLocalUrls: true }) });
  let hash = "";
  if (logo !== "none") {
    const { draft } = (await owner("theme.setImage", { slot: "logo", image: { base64: base64(await makePng(600, 200, 41)) } })) as { draft: { logo: { hash: string; widths: number[] } } };
    expect(draft.logo.widths).toEqual([160, 320, 600]);
    hash = draft.logo.hash;
    if (logo === "published") await owner("theme.publish", {});
  }
  const placed = await placeTestOrder(db, s);
  const [event] = await sql<{ id: string; created_at: Date }>("select id, created_at from outbox_event where kind = 'order.placed' and payload->>'orderId' = $1", [placed.order.id]);
  const message = { eventId: event!.id, storeId: s.id, kind: "order.placed", payload: { orderId: placed.order.id }, createdAt: event!.created_at.toISOString(), route: "notification:order_confirmation" };
  expect(await sendNotification(message, deps)).toBe("sent");
  const [mail] = await sql<{ html_body: string; text_body: string }>("select html_body, text_body from mailbox_message where idempotency_key = $1", [`${event!.id}:order_confirmation`]);
  return { s, hash, html: mail!.html_body, text: mail!.text_body };
}

describe("the store's logo in its emails", () => {
  it("an order email of a store with a published logo shows it: the 320 px JPEG on the store's domain, alt the store's name, fitted to 144 × 48", async () => {
    const { s, hash, html, text } = await confirmationEmail("Asha's Silk & Co", "published");
    const src = `https://${s.hostname}/media/${hash}/320.jpg`;
    expect(html).toContain(`<img src="${src}" alt="Asha&#39;s Silk &#38; Co" width="144" height="48" style="display:block;border:0;max-width:144px;height:auto">`);
    expect(html.match(/<img /g)).toHaveLength(1);
    expect(text).not.toContain("/media/");
    // The mail client loads it from the storefront, as a JPEG.
    const url = new URL(src);
    const image = await call(worker, `http://storefront.test${url.pathname}`, { headers: { host: url.host } });
    expect([image.status, image.headers.get("content-type")]).toEqual([200, "image/jpeg"]);
  });

  it("a store without a published logo (none, or only in the draft) shows its name and no image", async () => {
    for (const logo of ["none", "draft"] as const) {
      const { html } = await confirmationEmail("Meera Handlooms", logo);
      expect(html, logo).not.toContain("<img");
      expect(html, logo).toMatch(/<span style="font-family:[^"]+;font-size:20px;font-weight:700;color:#1f2328">Meera Handlooms<\/span>/);
    }
  });
});
