import { describe, expect, it } from "vitest";
import { ToolCard, type ToolEvent } from "./assistant-cards";

const ctx = { currency: "INR", csrf: "csrf-token", conversationId: "11111111-1111-4111-8111-111111111111" };
const html = async (event: ToolEvent) => String(await (<ToolCard event={event} ctx={ctx} />));
const PRODUCT = "22222222-2222-4222-8222-222222222222";

describe("the assistant's tool cards", () => {
  it("a product list links each product to its page, with its prices in rupees", async () => {
    const out = await html({ tool: "listProducts", isError: false, output: { total: 1, items: [{ id: PRODUCT, title: "Cotton Kurta", status: "active", priceMinMinor: 79900, priceMaxMinor: 89900 }] } });
    expect(out).toContain(`<a href="/products/${PRODUCT}">Cotton Kurta</a>`);
    expect(out).toContain("₹799.00–₹899.00");
  });

  it("shows every value as text: markup in a title is escaped, and an id that is not a uuid makes no link", async () => {
    const out = await html({ tool: "listProducts", isError: false, output: { items: [{ id: "javascript:alert(1)", title: "<img src=x onerror=alert(1)>", priceMinMinor: 1, priceMaxMinor: 1 }] } });
    expect(out).not.toContain("<img");
    expect(out).toContain("&lt;img src=x onerror=alert(1)&gt;");
    expect(out).not.toContain("javascript:");
  });

  it("a pending proposal shows its diff with Approve and Reject for this conversation; a decided one says what happened", async () => {
    const approvalId = "33333333-3333-4333-8333-333333333333";
    const diff = [{ field: "variants[0].priceMinor", label: "Price", from: 79900, to: 89900 }];
    const pending = await html({ tool: "updateProduct", isError: false, output: { approvalId, status: "pending", summary: "Change Cotton Kurta's price", diff } });
    expect(pending).toContain(`action="/assistant/${ctx.conversationId}/approve"`);
    expect(pending).toContain(`action="/assistant/${ctx.conversationId}/reject"`);
    expect(pending).toContain(`name="id" value="${approvalId}"`);
    expect(pending).toContain(`name="csrf" value="csrf-token"`);
    expect(pending).toContain("Nothing changes until you approve it.");
    const approved = await html({ tool: "updateProduct", isError: false, output: { approvalId, status: "approved", summary: "s", diff } });
    expect(approved).not.toContain("/approve");
    expect(approved).toContain("Approved: the change was made.");
  });

  it("a refused tool is an alert with its words; an unknown shape is its JSON, folded", async () => {
    expect(await html({ tool: "createDiscount", isError: true, output: { code: "FORBIDDEN", message: "Your role does not allow it." } })).toMatch(/role="alert".*createDiscount: Your role does not allow it\./s);
    const other = await html({ tool: "listPages", isError: false, output: { items: [{ title: "About <us>" }] } });
    expect(other).toContain("<details");
    expect(other).toContain("About &lt;us&gt;");
  });
});
