import { describe, expect, it } from "vitest";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb } from "../../../test/harness";
import { page, rpc, rpcJson, sessionFor, type Browser } from "../../../test/admin";
import { connectMcpClient, toolResult } from "../../../test/oauth";

/** What an approver reads on /ai/approvals: every changed field, before and after, in full. */
const db = testDb();

const escape = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const removedLine = (text: string) => `<del class="ln"><span class="sign" aria-hidden="true">−</span><span class="sr-only">removed: </span>${escape(text)}</del>`;
const addedLine = (text: string) => `<ins class="ln"><span class="sign" aria-hidden="true">+</span><span class="sr-only">added: </span>${escape(text)}</ins>`;
const sameLine = (text: string) => `<span class="ln"><span class="sign" aria-hidden="true"> </span>${escape(text)}</span>`;
const row = (label: string, from: string | null, to: string | null) =>
  `<tr><th scope="row">${escape(label)}</th><td data-label="Now">${from === null ? '<span class="muted">—</span>' : escape(from)}</td><td data-label="Proposed">${to === null ? '<span class="muted">—</span>' : escape(to)}</td></tr>`;

/** The pending proposal `id` as rendered on the approvals page. */
async function proposalHtml(browser: Browser, id: string): Promise<string> {
  const html = await (await page(browser, "/ai/approvals")).text();
  const at = html.indexOf(`value="${id}"`);
  expect(at).toBeGreaterThan(0);
  const start = html.lastIndexOf('<article class="card proposal"', at);
  return html.slice(start, html.indexOf("</article>", at));
}

/** A store that lets AI clients propose changes, its Owner's connected client, and the fixture product. */
async function setUp() {
  const connected = await connectMcpClient(db, { areas: ["products:write", "content:write", "inventory:write", "discounts:write"] });
  expect((await rpc(connected.browser, "store/update", { mcpAllowChanges: true })).status).toBe(200);
  const call = async (name: string, args: Record<string, unknown>) => toolResult(await connected.client.callTool({ name, arguments: args }));
  const propose = async (name: string, args: Record<string, unknown>) => {
    const answer = await call(name, args);
    expect(answer).toMatchObject({ status: "pending" });
    return { id: String(answer["approvalId"]), answer };
  };
  return { ...connected, call, propose };
}

describe("AI approvals: readable proposals", () => {
  it("updatePage: every removed and added body line in full, titles in full, the whole texts; model text is escaped", async () => {
    const { browser, call, propose } = await setUp();
    const { items } = (await call("listPages", {})) as { items: { id: string }[] };
    const pageId = items[0]!.id;
    const long = `Returns are accepted within 30 days of delivery, provided the item is unused and in its original packaging ${"with all tags attached ".repeat(4)}`;
    const before = ["# Returns", "", long, "Refunds take 5 to 7 working days.", "Contact us at help@example.test.", "Thank you."].join("\n");
    expect((await rpc(browser, "content/update", { id: pageId, body: before })).status).toBe(200);
    const after = ["# Returns & refunds", "", long, "Refunds take 2 working days.", "<script>alert('x')</script>", "Contact us at help@example.test.", "Thank you."].join("\n");
    const title = `About us: our story, our makers and the long road from the loom to your door ${"and back again ".repeat(3)}`.trim();

    const { id, answer } = await propose("updatePage", { id: pageId, title, body: after });
    const html = await proposalHtml(browser, id);
    expect(html).toContain(row("Title", "About", title));
    for (const line of ["# Returns", "Refunds take 5 to 7 working days."]) expect(html).toContain(removedLine(line));
    for (const line of ["# Returns & refunds", "Refunds take 2 working days.", "<script>alert('x')</script>"]) expect(html).toContain(addedLine(line));
    expect(html).toContain(sameLine(long));
    expect(html).toContain("2 lines removed, 3 lines added.");
    expect(html).toContain(`<pre class="whole">${escape(before)}</pre>`);
    expect(html).toContain(`<pre class="whole">${escape(after)}</pre>`);
    expect(html).not.toContain("<script>");
    expect(html).not.toMatch(/\d+ characters/);
    // The AI client gets the same diff in the tool's answer.
    expect(answer["diff"]).toEqual([
      { kind: "value", field: "title", label: "Title", from: "About", to: title },
      expect.objectContaining({ kind: "text", field: "body", label: "Body", from: before, to: after }),
    ]);
  });

  it("a long body: only the changed lines with their context, and the unchanged runs counted", async () => {
    const { browser, call, propose } = await setUp();
    const { items } = (await call("listPages", {})) as { items: { id: string }[] };
    const lines = Array.from({ length: 400 }, (_, i) => `Paragraph ${i + 1} of the shipping policy.`);
    expect((await rpc(browser, "content/update", { id: items[0]!.id, body: lines.join("\n") })).status).toBe(200);
    const changed = lines.map((l, i) => (i === 199 ? "Paragraph 200, rewritten." : l));
    const { id } = await propose("updatePage", { id: items[0]!.id, body: changed.join("\n") });
    const html = await proposalHtml(browser, id);
    expect(html).toContain(removedLine("Paragraph 200 of the shipping policy."));
    expect(html).toContain(addedLine("Paragraph 200, rewritten."));
    expect(html).toContain(sameLine("Paragraph 197 of the shipping policy."));
    expect(html).not.toContain(sameLine("Paragraph 196 of the shipping policy."));
    expect(html).toContain("… 196 unchanged lines …");
    expect(html).toContain("Line 197");
    expect(html).toContain("… 197 unchanged lines …");
  });

  it("updateProduct: both prices in the store's currency and in paise, every changed field, new variants in full", async () => {
    const { browser, call, propose } = await setUp();
    const { items } = (await call("listProducts", {})) as { items: { id: string }[] };
    const product = (await call("getProduct", { id: items[0]!.id })) as { id: string; variants: { id: string; sku: string }[] };
    const variant = product.variants[0]!;
    const description = "Hand-woven cotton.\nWash cold.\nMade in Varanasi.";
    const { id } = await propose("updateProduct", {
      id: product.id,
      vendor: "Loom & Co",
      description,
      variants: [
        { id: variant.id, priceMinor: 125_000, compareAtMinor: 150_000, preorder: true },
        { title: "Large", sku: "FIX-LARGE", priceMinor: 130_000, compareAtMinor: null },
      ],
    });
    const html = await proposalHtml(browser, id);
    const name = `Variant ${variant.sku} (Default)`;
    expect(html).toContain(row("Vendor", null, "Loom & Co"));
    expect(html).toContain(row(`${name} · Price`, "₹10.00 (1000 paise)", "₹1,250.00 (125000 paise)"));
    expect(html).toContain(row(`${name} · Compare-at price`, null, "₹1,500.00 (150000 paise)"));
    expect(html).toContain(row(`${name} · Pre-order`, "no", "yes"));
    expect(html).toContain(row("New variant 1 · Title", null, "Large"));
    expect(html).toContain(row("New variant 1 · SKU", null, "FIX-LARGE"));
    expect(html).toContain(row("New variant 1 · Price", null, "₹1,300.00 (130000 paise)"));
    expect(html).toContain(row("New variant 1 · Tax class", null, "gst_18"));
    expect(html).toContain(row("New variant 1 · Pre-order", null, "no"));
    expect(html).not.toContain("New variant 1 · Compare-at price");
    for (const line of description.split("\n")) expect(html).toContain(addedLine(line));
  });

  it("adjustInventory: the real on hand and available before and after, with the SKU and the location", async () => {
    const { browser, call, propose } = await setUp();
    const { items } = (await call("inventoryLevels", {})) as { items: { variantId: string; locationId: string; onHand: number; sku: string }[] };
    const level = items[0]!;
    expect(level.onHand).toBe(5);
    const { id, answer } = await propose("adjustInventory", { variantId: level.variantId, locationId: level.locationId, delta: -3, reason: "damaged", note: "Water <damage>" });
    expect(String(answer["summary"])).toContain("on hand 5 → 2");
    const html = await proposalHtml(browser, id);
    const where = `${level.sku} (Fixture · Default) at Fixture warehouse`;
    expect(html).toContain(row(`On hand: ${where}`, "5", "2"));
    expect(html).toContain(row(`Available: ${where}`, "5", "2"));
    expect(html).toContain(row("Reason", null, "damaged"));
    expect(html).toContain(row("Note", null, "Water <damage>"));
    expect(html).not.toContain("current on hand");
  });

  it("createDiscount: one row per field", async () => {
    const { browser, propose } = await setUp();
    const { id } = await propose("createDiscount", {
      code: "diwali500",
      kind: "fixed_amount",
      value: 50_000,
      startsAt: "2030-10-20T00:00:00+05:30",
      endsAt: "2030-11-05T23:59:59+05:30",
      usageLimit: 200,
    });
    const html = await proposalHtml(browser, id);
    expect(html).toContain(row("Code", null, "DIWALI500"));
    expect(html).toContain(row("Kind", null, "fixed amount"));
    expect(html).toContain(row("Value", null, "₹500.00 (50000 paise) off"));
    expect(html).toContain(row("Starts", null, "2030-10-19 18:30:00 UTC"));
    expect(html).toContain(row("Ends", null, "2030-11-05 18:29:59 UTC"));
    expect(html).toContain(row("Usage limit", null, "200 uses in total"));
    const open = await propose("createDiscount", { code: "TENOFF", kind: "percentage", value: 10 });
    const openHtml = await proposalHtml(browser, open.id);
    expect(openHtml).toContain(row("Value", null, "10% off"));
    expect(openHtml).toContain(row("Starts", null, "when approved"));
    expect(openHtml).toContain(row("Ends", null, "no end"));
    expect(openHtml).toContain(row("Usage limit", null, "unlimited"));
  });

  it("still renders rows stored in the old shape ({field, from, to}); the list answers them in the new one", async () => {
    const store = await makeStore(db);
    const owner = await sessionFor(db, store.ownerUserId, store.id);
    const old = [
      { field: "title", from: "About", to: "About <us>" },
      { field: "body", from: "12 characters", to: "40 characters" },
      { field: "discount", from: null, to: { code: "OLD10", kind: "percentage", value: 10 } },
      { field: "FIX-1.preorder", from: false, to: true },
    ];
    const [row0] = await withStore(db, store.id, async (tx) =>
      (await tx.$client.query<{ id: string }>("update ai_approval set diff = $1::jsonb where summary = 'Fixture proposal' returning id", [JSON.stringify(old)])).rows,
    );
    const html = await proposalHtml(owner, row0!.id);
    expect(html).toContain(row("title", "About", "About <us>"));
    expect(html).toContain(row("body", "12 characters", "40 characters"));
    expect(html).toContain(row("discount", null, '{"code":"OLD10","kind":"percentage","value":10}'));
    expect(html).toContain(row("FIX-1.preorder", "false", "true"));
    const listed = await rpcJson<{ items: { id: string; diff: unknown[] }[] }>(await rpc(owner, "aiApprovals/list", {}));
    expect(listed.items.find((i) => i.id === row0!.id)!.diff[0]).toEqual({ kind: "value", field: "title", label: "title", from: "About", to: "About <us>" });
  });
});
