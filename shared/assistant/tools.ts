import type { z } from "zod";
import { RESERVED_PERMISSIONS, type Permission } from "../auth/permissions";
import type { Plan } from "../db/plan";
import type { Q } from "../db/steps";
import { readOn } from "../db/with-store";
import { summary as salesSummary } from "../procedures/analytics";
import { getPage, listPages, updatePage } from "../procedures/content";
import { getCustomer, listCustomers } from "../procedures/customers";
import { procedureKey, type Procedure, type StoreContext, type StoreInfo, type StoreProcedure } from "../procedures/define";
import { createDiscount, listDiscounts } from "../procedures/discounts";
import { adjustInventory, listLevels, listLocations } from "../procedures/inventory";
import { getOrder, listOrders } from "../procedures/orders";
import { getProduct, listProducts, updateProduct } from "../procedures/products";
import { attachMedia, listMedia, removeMedia } from "../procedures/media";
import { txScope, type Scope } from "../procedures/scope";
import { textOrValue, valueChange, type Proposal } from "./changes";
import { describeDiscountCreation, describeInventoryAdjustment, describePageUpdate, describeProductUpdate } from "./describe";
import { describeMediaAttach, describeMediaRemoval } from "./describe-media";

/**
 * The AI assistant's tools (ARCHITECTURE §5): each one is a procedure of the registry with words an
 * LLM can act on. MCP lists them from here, so a tool added here appears over MCP with no other code.
 *
 * - A read tool runs its procedure and needs its permission.
 * - A change tool never runs directly: it makes a proposal (an AI approval) with a readable summary
 *   and a field-by-field diff (./changes.ts), which the member who connected the client approves, unless the store
 *   lets changes through without approval.
 */
export type { Change, Proposal } from "./changes";

interface ToolBase {
  name: string;
  description: string;
  procedure: StoreProcedure;
}

export interface ReadTool extends ToolBase {
  kind: "read";
}

export interface ChangeTool<I extends z.ZodType = z.ZodType> extends ToolBase {
  kind: "change";
  procedure: StoreProcedure<I>;
  /**
   * Reads what the change would touch and says what it would do, before anything changes: a plan, whose
   * reads go with the caller's opening (./proposal-units.ts).
   */
  describePlan(q: Q, scope: Scope, input: z.output<I>): Plan<Proposal>;
  /** The same on the caller's open transaction (the step-by-step proposal path, ./approvals.ts). */
  describe(ctx: StoreContext, input: z.output<I>): Promise<Proposal>;
}

export type Tool = ReadTool | ChangeTool;

const permissionOf = (tool: Tool): Permission => {
  if (tool.procedure.access === "none") throw new Error(`Tool ${tool.name} maps to a procedure without a permission`);
  return tool.procedure.access;
};

const read = (name: string, procedure: StoreProcedure, description: string): ReadTool => ({ kind: "read", name, procedure, description });

function change<I extends z.ZodType>(name: string, procedure: StoreProcedure<I>, description: string, describePlan: ChangeTool<I>["describePlan"]): ChangeTool {
  const describe: ChangeTool<I>["describe"] = (ctx, input) => readOn(ctx.tx, (q) => describePlan(q, txScope(ctx), input));
  return { kind: "change", name, procedure, description, describePlan, describe } as unknown as ChangeTool;
}

export const TOOLS: readonly Tool[] = [
  read("listProducts", listProducts, "List products (newest change first), 20 per page by default. Filter with `status` or search `query` in title, handle and SKU. Prices are in minor units (paise)."),
  read("getProduct", getProduct, "Get one product by `id` with its variants (SKU, price in minor units, GST class, pre-order) and stock per location."),
  read("inventoryLevels", listLevels, "Stock per variant and location: on hand, reserved and available. Filter by `productId`, `variantId`, `locationId` or search `query` (title or SKU)."),
  read("listLocations", listLocations, "List the store's stock locations and whether each sells online."),
  read("listCustomers", listCustomers, "List customers (names and marketing consent only, newest first). Search `query` by name."),
  read(
    "customerDetails",
    getCustomer,
    "Contact details of one customer by `id`: email, phone, city and note. Answers only while the store lets AI clients read customer details.",
  ),
  read(
    "listOrders",
    listOrders,
    "List orders, newest first, 20 per page by default: number, statuses, total (minor units) and when placed. Filter with `status`, `paymentStatus`, `fulfillmentStatus`, `placedFrom` / `placedTo` (ISO times); search `query` by order number (#1002) or email. Emails are null while the store keeps customer details from AI clients.",
  ),
  read(
    "getOrder",
    getOrder,
    "Get one order by `id`: money, parcels with GST, lines, payment attempts, shipments and its timeline of events. It carries the customer's email, phone and address, so it answers only while the store lets AI clients read customer details.",
  ),
  read("listDiscounts", listDiscounts, "List discount codes with their kind, value, validity window, usage and state (live, scheduled, expired, used_up, disabled)."),
  read("listPages", listPages, "List the store's content pages (title, handle, status) without their text."),
  read("getPage", getPage, "Get one content page by `id`, with its text."),
  read(
    "listProductImages",
    listMedia,
    "List a product's images (`productId`) in order: alt text, size, the variants that show each, and each width's storefront path (WebP and JPEG).",
  ),
  read("salesSummary", salesSummary, "Counts and totals for a date range (`from`, `to` as YYYY-MM-DD, UTC): products, customers, stock units and value, discounts, pages."),
  change(
    "updateProduct",
    updateProduct,
    "Propose changes to a product (`id` plus the fields to change; `variants` with an `id` change those variants, without one add new ones). The store's member approves before it happens unless approval is switched off.",
    describeProductUpdate,
  ),
  change(
    "adjustInventory",
    adjustInventory,
    "Propose a stock adjustment: `delta` units (positive to add, negative to remove) of `variantId` at `locationId`, with a `reason` (received, correction, damaged, shrinkage, returned, recount, other).",
    describeInventoryAdjustment,
  ),
  change(
    "createDiscount",
    createDiscount,
    "Propose a new discount code: `code`, `kind` (percentage or fixed_amount), `value` (whole percent, or minor units), optional `startsAt`, `endsAt` (ISO times) and `usageLimit`.",
    describeDiscountCreation,
  ),
  change(
    "attachProductImage",
    attachMedia,
    "Propose adding an image to a product: `productId`, `alt` (what the image shows), and `image` as `{ url }` (https, public, at most 10 MB) or `{ base64 }` (small files); optional `variantIds` that show it. JPEG, PNG, WebP or AVIF, checked by content.",
    describeMediaAttach,
  ),
  change("removeProductImage", removeMedia, "Propose removing an image (`id`) from a product (`productId`).", describeMediaRemoval),
  change(
    "updatePage",
    updatePage,
    "Propose changes to a content page (`id` plus `title`, `handle` or `body`).",
    describePageUpdate,
  ),
];

if (new Set(TOOLS.map((t) => t.name)).size !== TOOLS.length) throw new Error("Two tools share a name");
// A member-only permission (a campaign's send, refunds, cancels, deletes…) is never a tool: no grant holds it.
for (const t of TOOLS) if ((RESERVED_PERMISSIONS as readonly string[]).includes(permissionOf(t))) throw new Error(`Tool ${t.name} needs a member-only permission`);

/** The change tool that describes a procedure's changes, when the assistant has one (by key: the pipeline may hand on a copy). */
export function changeToolFor(proc: Procedure): ChangeTool | undefined {
  const key = procedureKey(proc);
  return TOOLS.find((t): t is ChangeTool => t.kind === "change" && procedureKey(t.procedure) === key);
}

/**
 * A change without a tool of its own (an OAuth connection calling /api/v1): every field it would set,
 * in full, so the approver reads exactly what will be sent.
 */
export function describeCall(proc: Procedure, input: Record<string, unknown>): Proposal {
  const diff = Object.entries(input)
    .filter(([, to]) => to !== undefined)
    .map(([field, to]) => {
      if (to === null) return valueChange(field, field, null, "null (clears it)");
      if (typeof to === "number" || typeof to === "boolean") return valueChange(field, field, null, to);
      return textOrValue(field, field, null, typeof to === "string" ? to : JSON.stringify(to, null, 2));
    });
  return { summary: `${procedureKey(proc)}: ${proc.description.split(". ")[0]!.replace(/\.$/, "")} (${diff.map((d) => d.field).join(", ") || "no fields"}).`, diff };
}

/** The tools a caller sees: their permission in the caller's effective set; change tools only while the store allows changes. */
export function visibleTools(permissions: ReadonlySet<Permission>, store: StoreInfo): Tool[] {
  return TOOLS.filter((t) => permissions.has(permissionOf(t)) && (t.kind === "read" || store.mcpAllowChanges));
}
