import { env } from "cloudflare:workers";
import { afterAll } from "vitest";
import { Database } from "#shared/db/database";
import { randomSecret } from "#shared/core/tokens";
import { emit } from "#shared/db/outbox";
import { createLogger } from "#shared/core/log";
import { AUTOMATION_DEFAULTS } from "#shared/marketing/render";
import { pushStoreFactsTo } from "#shared/storefront/store-facts";
import { THEME_DEFAULTS } from "#shared/storefront/theme";
import {
  aiApproval,
  apiActivity,
  apiGrant,
  appDelivery,
  cart,
  campaign,
  cartLine,
  collection,
  collectionProduct,
  customer,
  discount,
  domainCheck,
  domainRouteReceipt,
  fulfillmentOrder,
  fulfillmentOrderLine,
  inventoryAdjustment,
  inventoryLevel,
  jobFailure,
  location,
  mailboxMessage,
  menuItem,
  marketingAutomation,
  productMedia,
  marketingConsentRecord,
  idempotencyKey,
  ucpSigningKey,
  ucpCheckoutSession,
  ucpOrderDelivery,
  marketingEnrolment,
  marketingMessage,
  member,
  merchantTask,
  notification,
  orderCounter,
  orderLine,
  orderReturn,
  orderReturnLine,
  page,
  pageView,
  paymentAttempt,
  product,
  productVariant,
  refund,
  restockSubscription,
  shipment,
  shipmentEvent,
  taxDocumentCounter,
  taxCreditNote,
  taxInvoice,
  shopOrder,
  shortLink,
  staffInvitation,
  store,
  storeApp,
  storeDomain,
  storeTheme,
  assistantUsage,
  assistantConversation,
  userAccount,
  webhookReceipt,
} from "#shared/db/schema";
import { withStore, type StoreTx } from "#shared/db/with-store";

/**
 * A database for this test file, as the runtime role (app_user), closed when the file is done. Like the
 * runtimes' own, a commit that changes a storefront pushes the store's facts to the HOSTS namespace when
 * the project binds it (so a test's direct write is seen by the storefront as an admin's would be).
 */
export function testDb(): Database {
  const bindings = env as unknown as { DATABASE_URL: string; DB_WS_PROXY?: string };
  const db = new Database({
    url: bindings.DATABASE_URL,
    wsProxy: bindings.DB_WS_PROXY || undefined,
    // A test's own setup and checks are not what is under test: on a busy 2-core machine one HTTP round
    // trip may pass the runtimes' 5 s bound, so they get room (the timeout's 503 has its own tests).
    connectTimeoutMs: 30_000,
    onStorefrontChange: pushStoreFactsTo(env, createLogger({ test: true }, "warn")),
  });
  afterAll(() => db.close());
  return db;
}

export const uniqueSuffix = () => crypto.randomUUID().slice(0, 8);

export interface TestStore {
  id: string;
  slug: string;
  name: string;
  hostname: string;
  pendingHostname: string;
  ownerUserId: string;
  ownerEmail: string;
  memberId: string;
  outboxEventId: string;
}

/**
 * One placed order with a line, a parcel, its line, a payment attempt, a shipment with an event, a return
 * with a line, a refund (with its credit note) and a merchant task, plus a webhook receipt.
 */
async function orderFixture(tx: StoreTx, variantId: string, locationId: string): Promise<string> {
  await tx.insert(orderCounter).values({ storeId: tx.storeId, nextNumber: 1002 });
  const [o] = await tx
    .insert(shopOrder)
    .values({
      storeId: tx.storeId,
      number: 1001,
      email: "buyer@example.test",
      shippingAddress: { name: "Fixture Buyer", line1: "1 Fixture Road", city: "Mumbai", state: "IN-MH", postalCode: "400001", country: "IN" },
      shipToState: "IN-MH",
      paymentMethod: "gateway",
      currency: "INR",
      subtotal: 1000,
      total: 1000,
      tax: 152,
    })
    .returning({ id: shopOrder.id });
  const orderId = o!.id;
  const [line] = await tx
    .insert(orderLine)
    .values({ storeId: tx.storeId, orderId, variantId, productTitle: "Fixture", variantTitle: "Default", taxClass: "gst_18", quantity: 1, unitPrice: 1000, lineTotal: 1000 })
    .returning({ id: orderLine.id });
  const [parcel] = await tx
    .insert(fulfillmentOrder)
    .values({ storeId: tx.storeId, orderId, locationId, originState: "IN-MH", subtotal: 1000, tax: 152, cgst: 76, sgst: 76 })
    .returning({ id: fulfillmentOrder.id });
  await tx.insert(fulfillmentOrderLine).values({ storeId: tx.storeId, fulfillmentOrderId: parcel!.id, orderLineId: line!.id, quantity: 1, reserved: 0 });
  const [attempt] = await tx
    .insert(paymentAttempt)
    .values({ storeId: tx.storeId, orderId, attempt: 1, idempotencyKey: `${orderId}:1`, provider: "local", amount: 1000 })
    .returning({ id: paymentAttempt.id });
  const [sent] = await tx
    .insert(shipment)
    // The merchant's own tracking number: no courier is asked about it (the tracking job skips it).
    .values({ storeId: tx.storeId, orderId, fulfillmentOrderId: parcel!.id, provider: "manual", awb: `LC${orderId.slice(0, 8)}` })
    .returning({ id: shipment.id });
  await tx.insert(shipmentEvent).values({ storeId: tx.storeId, shipmentId: sent!.id, status: "pending", source: "merchant" });
  await tx.insert(taxDocumentCounter).values({ storeId: tx.storeId, gstin: "07ABCDE1234F1Z2", financialYear: "2024-25", kind: "invoice", nextNumber: 2 });
  const [invoice] = await tx.insert(taxInvoice).values({
    storeId: tx.storeId,
    orderId,
    fulfillmentOrderId: parcel!.id,
    gstin: "07ABCDE1234F1Z2",
    financialYear: "2024-25",
    number: "INV/24-25/000001",
    issuedAt: new Date(),
    document: fixtureDocument("Tax invoice", "INV/24-25/000001"),
  }).returning({ id: taxInvoice.id });
  const [ret] = await tx.insert(orderReturn).values({ storeId: tx.storeId, orderId, number: 1, reason: "Fixture" }).returning({ id: orderReturn.id });
  await tx.insert(orderReturnLine).values({ storeId: tx.storeId, returnId: ret!.id, orderLineId: line!.id, quantity: 1 });
  const [money] = await tx.insert(refund).values({ storeId: tx.storeId, orderId, paymentAttemptId: attempt!.id, returnId: ret!.id, amount: 100 }).returning({ id: refund.id });
  await tx.insert(taxCreditNote).values({
    storeId: tx.storeId,
    orderId,
    refundId: money!.id,
    invoiceId: invoice!.id,
    gstin: "07ABCDE1234F1Z2",
    financialYear: "2024-25",
    number: "CN/24-25/000001",
    issuedAt: new Date(),
    credited: [],
    document: fixtureDocument("Credit note", "CN/24-25/000001"),
  });
  await tx.insert(merchantTask).values({ storeId: tx.storeId, kind: "rto", orderId, subjectId: sent!.id, title: "Fixture task" });
  await tx.insert(notification).values({ storeId: tx.storeId, eventId: orderId, template: "order_confirmation", recipient: "buyer@example.test", subject: "Fixture" });
  await tx.insert(mailboxMessage).values({ storeId: tx.storeId, idempotencyKey: `fixture:${orderId}`, sender: "Fixture <shop@example.test>", recipient: "buyer@example.test", subject: "Fixture", textBody: "Fixture", htmlBody: "<p>Fixture</p>", tag: "fixture" });
  await tx.insert(jobFailure).values({ storeId: tx.storeId, job: "{shipping}-track", error: "Fixture failure" });
  await tx.insert(webhookReceipt).values({ storeId: tx.storeId, provider: "local", eventId: `evt_${orderId}` });
  return orderId;
}

/** A sent campaign, an automation that is off, a decided enrolment and a skipped message: nothing a job would pick up. */
async function marketingFixture(tx: StoreTx, customerId: string, orderId: string): Promise<void> {
  const [k] = await tx
    .insert(campaign)
    .values({ storeId: tx.storeId, name: "Fixture", subject: "Fixture", body: "Fixture", audience: "subscribers", status: "sent", startsAt: new Date(), finishedAt: new Date() })
    .returning({ id: campaign.id });
  const [a] = await tx
    .insert(marketingAutomation)
    .values({ storeId: tx.storeId, kind: "first_order_thanks", ...AUTOMATION_DEFAULTS.first_order_thanks })
    .returning({ id: marketingAutomation.id });
  const [e] = await tx
    .insert(marketingEnrolment)
    .values({ storeId: tx.storeId, automationId: a!.id, orderId, email: "buyer@example.test", eventId: crypto.randomUUID(), dueAt: new Date(), status: "skipped", reason: "no_consent" })
    .returning({ id: marketingEnrolment.id });
  await tx.insert(marketingMessage).values([
    { storeId: tx.storeId, customerId, campaignId: k!.id, recipient: "buyer@example.test", status: "skipped", reason: "Fixture" },
    { storeId: tx.storeId, customerId, enrolmentId: e!.id, recipient: "buyer@example.test", status: "skipped", reason: "Fixture" },
  ]);
  // A consent record as a trigger writes it (migration 0033), for a customer whose consent the fixture leaves as none.
  await tx.insert(marketingConsentRecord).values({ storeId: tx.storeId, customerId, state: "pending", source: "checkout" });
  // An Idempotency-Key with its stored answer (migration 0051), as a write sent with one leaves it.
  // A retired UCP signing key (migration 0052): a fixture's shape only, sealed with nothing usable.
  await tx.insert(ucpSigningKey).values({ storeId: tx.storeId, kid: "F".repeat(43), publicJwk: { kty: "EC", crv: "P-256", x: "x", y: "y" }, privateSealed: "v1.AAAA.AAAA", retiresAt: new Date(0) });
  // A UCP checkout session an agent left incomplete (migration 0053).
  await tx.insert(ucpCheckoutSession).values({ storeId: tx.storeId, agentProfile: "https://agent.example/profile", lineItems: [{ variant_id: crypto.randomUUID(), quantity: 1 }] });
  // An order update its agent's platform never took (migration 0055): failed, so no try is due.
  await tx.insert(ucpOrderDelivery).values({ storeId: tx.storeId, orderId, eventId: crypto.randomUUID(), eventKind: "order.paid", eventCreatedAt: new Date(), status: "failed", attempts: 6, lastError: "Fixture" });
  await tx.insert(idempotencyKey).values({ storeId: tx.storeId, owner: `member:${crypto.randomUUID()}`, key: "fixture", procedure: "products.create", requestHash: "0".repeat(64), status: 200, response: '{"json":null}' });
}

/** A printed document as small as its model allows (shared/documents/model.ts): the fixture's invoice and credit note. */
const fixtureDocument = (title: string, number: string) => ({
  title,
  number,
  date: "2024-10-01",
  supplier: { name: "Fixture Traders", address: ["1 Fixture Road", "Delhi 110001"], gstin: "07ABCDE1234F1Z2" },
  recipient: { name: "Fixture Shopper", address: ["2 Fixture Lane", "Delhi 110002"] },
  columns: ["description", "quantity", "total"],
  lines: [{ description: "Fixture", quantity: 1, total: 1000 }],
});

/**
 * A fresh store with a row in every store-scoped table (member, store_domain, outbox_event), made the
 * way the application makes rows: as app_user, inside withStore. Tests never share stores, so they do
 * not depend on order and never truncate anything.
 */
export async function makeStore(db: Database, options: { name?: string } = {}): Promise<TestStore> {
  const id = crypto.randomUUID();
  const suffix = uniqueSuffix();
  const slug = `t-${suffix}`;
  const name = options.name ?? `Test Store ${suffix}`;
  const hostname = `${slug}.shop.test`;
  const pendingHostname = `pending-${slug}.shop.test`;
  const ownerEmail = `owner-${suffix}@example.test`;
  const [user] = await db.orm
    .insert(userAccount)
    .values({ email: ownerEmail, passwordHash: "pbkdf2_sha256$1$x$y" })
    .returning({ id: userAccount.id });
  return withStore(db, id, async (tx) => {
    await tx.insert(store).values({ id, slug, name, currency: "INR" });
    const domains = await tx
      .insert(storeDomain)
      .values([
        { storeId: id, hostname, status: "verified", isPrimary: true, verifiedAt: new Date() },
        { storeId: id, hostname: pendingHostname, status: "pending" },
      ])
      .returning({ id: storeDomain.id });
    // The pending domain was checked a moment ago and is not due for an hour, so a verify job run at the
    // real time leaves every test's fresh store alone (shared/jobs/domains-verify.ts).
    const now = Date.now();
    await tx.insert(domainCheck).values({
      storeId: id,
      domainId: domains[1]!.id,
      lastCheckedAt: new Date(now),
      lastResult: "not_found",
      nextCheckAt: new Date(now + 3_600_000),
    });
    await tx.insert(domainRouteReceipt).values({ storeId: id, eventId: crypto.randomUUID(), kind: "domain.verified", hostname, outcome: "skipped" });
    const [m] = await tx.insert(member).values({ storeId: id, userId: user!.id, role: "owner" }).returning({ id: member.id });
    const outboxEventId = await emit(tx, "store.created", { slug });
    // One row in every other store-scoped table, for the tenancy tests to aim at.
    await tx.insert(staffInvitation).values({
      storeId: id,
      email: `invitee-${suffix}@example.test`,
      role: "staff",
      tokenHash: crypto.randomUUID().replace(/-/g, "").repeat(2),
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const [p] = await tx.insert(product).values({ storeId: id, title: "Fixture", handle: "fixture" }).returning({ id: product.id });
    const [v] = await tx
      .insert(productVariant)
      .values({ storeId: id, productId: p!.id, sku: `FIX-${suffix}`, priceMinor: 1000 })
      .returning({ id: productVariant.id });
    // A row only: no objects in R2 behind it (shared/media/ tests upload their own).
    await tx.insert(productMedia).values({ storeId: id, productId: p!.id, alt: "Fixture", hash: "0".repeat(64), originalType: "image/png", originalBytes: 1, width: 1, height: 1, widths: [1] });
    const [l] = await tx.insert(location).values({ storeId: id, name: "Fixture warehouse" }).returning({ id: location.id });
    await tx.insert(inventoryLevel).values({ storeId: id, variantId: v!.id, locationId: l!.id, onHand: 5 });
    await tx
      .insert(inventoryAdjustment)
      .values({ storeId: id, variantId: v!.id, locationId: l!.id, delta: 5, onHandAfter: 5, reason: "received" });
    const [shopper] = await tx.insert(customer).values({ storeId: id, email: `shopper-${suffix}@example.test`, firstName: "Fixture" }).returning({ id: customer.id });
    await tx.insert(discount).values({ storeId: id, code: `FIX${suffix.toUpperCase()}`, kind: "percentage", value: 10 });
    const [about] = await tx.insert(page).values({ storeId: id, title: "About", handle: "about" }).returning({ id: page.id });
    const [shelf] = await tx.insert(collection).values({ storeId: id, title: "Fixture shelf", handle: "fixture-shelf" }).returning({ id: collection.id });
    await tx.insert(collectionProduct).values({ storeId: id, collectionId: shelf!.id, productId: p!.id, position: 0 });
    // Search holds active products only (migration 0043) and the fixture is a draft: a row of its own for the tenancy test
    // (after the collection's, whose trigger refreshes the product's search row away).
    await tx.$client.query("insert into product_search (store_id, product_id, title, extra, words, from_price, in_stock) values ($1, $2, 'fixture', '', 'fixture', 1000, true)", [id, p!.id]);
    await tx.insert(menuItem).values({ storeId: id, position: 0, label: "About", kind: "page", pageId: about!.id });
    // A saved draft only: publishing one would change every test store's storefront (migration 0041).
    await tx.insert(storeTheme).values({ storeId: id, draft: THEME_DEFAULTS });
    const [k] = await tx
      .insert(cart)
      .values({ storeId: id, tokenHash: (crypto.randomUUID() + crypto.randomUUID()).replace(/-/g, ""), currency: "INR" })
      .returning({ id: cart.id });
    await tx.insert(cartLine).values({ storeId: id, cartId: k!.id, variantId: v!.id, quantity: 1 });
    const [g] = await tx
      .insert(apiGrant)
      .values({
        storeId: id,
        kind: "token",
        memberId: m!.id,
        name: "Fixture token",
        areas: ["products:read"],
        secretHash: (crypto.randomUUID() + crypto.randomUUID()).replace(/-/g, ""),
        secretHint: "fixt",
      })
      .returning({ id: apiGrant.id });
    await tx.insert(apiActivity).values({ storeId: id, grantId: g!.id, procedure: "products.list", kind: "read", via: "token", bucketStart: new Date() });
    await tx.insert(aiApproval).values({
      storeId: id,
      grantId: g!.id,
      memberId: m!.id,
      tool: "updatePage",
      procedure: "content.update",
      input: { id: crypto.randomUUID(), title: "Fixture" },
      summary: "Fixture proposal",
      expiresAt: new Date(Date.now() + 86_400_000),
    });
    const [link] = await tx
      .insert(shortLink)
      .values({ storeId: id, slug: "fixture", target: "/", utmSource: "fixture", utmMedium: "test", utmCampaign: "fixture" })
      .returning({ id: shortLink.id });
    await tx.insert(pageView).values({ storeId: id, path: "/", linkId: link!.id });
    const [app] = await tx
      .insert(storeApp)
      .values({
        storeId: id,
        name: "Fixture app",
        url: "https://hooks.example.com/fixture",
        events: ["order.*"],
        // Disabled: its secret is not derivable, and the delivery tests count what active apps receive.
        active: false,
        secretSalt: randomSecret(32),
        secretHash: (crypto.randomUUID() + crypto.randomUUID()).replace(/-/g, ""),
        secretHint: "fixt",
      })
      .returning({ id: storeApp.id });
    await tx.insert(appDelivery).values({
      storeId: id,
      appId: app!.id,
      eventId: outboxEventId,
      eventKind: "order.placed",
      eventCreatedAt: new Date(),
      status: "failed",
      attempts: 6,
      lastError: "Fixture",
    });
    await marketingFixture(tx, shopper!.id, await orderFixture(tx, v!.id, l!.id));
    // Already alerted: a restock of the fixture variant in another test alerts nobody of the fixture.
    await tx.insert(restockSubscription).values({ storeId: id, variantId: v!.id, email: `waiting-${suffix}@example.test`, status: "sent", notifiedAt: new Date() });
    // A day long past: what the assistant used today starts at nothing.
    await tx.insert(assistantUsage).values({ storeId: id, day: "2000-01-01", inputTokens: 10, outputTokens: 5, modelCalls: 1 });
    await tx.insert(assistantConversation).values({ storeId: id, memberId: m!.id, title: "Fixture conversation", messages: 2 });
    return { id, slug, name, hostname, pendingHostname, ownerUserId: user!.id, ownerEmail, memberId: m!.id, outboxEventId };
  });
}

/** Runs raw SQL on one pooled connection and returns the Postgres error code if it failed. */
export async function sqlErrorCode(db: Database, text: string, values: unknown[] = []): Promise<string | undefined> {
  const client = await db.connect();
  try {
    await client.query(text, values);
    return undefined;
  } catch (e) {
    return (e as { code?: string }).code ?? "unknown";
  } finally {
    client.release();
  }
}
