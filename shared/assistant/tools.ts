import { and, eq } from "drizzle-orm";
import type { z } from "zod";
import type { Permission } from "../auth/permissions";
import { location, productVariant } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { summary as salesSummary } from "../procedures/analytics";
import { getPage, listPages, loadPage, updatePage } from "../procedures/content";
import { getCustomer, listCustomers } from "../procedures/customers";
import { procedureKey, type Procedure, type StoreInfo, type StoreProcedure } from "../procedures/define";
import { createDiscount, listDiscounts } from "../procedures/discounts";
import { adjustInventory, listLevels, listLocations } from "../procedures/inventory";
import { getProduct, listProducts, loadProduct, updateProduct } from "../procedures/products";

/**
 * The AI assistant's tools (ARCHITECTURE §5): each one is a procedure of the registry with words an
 * LLM can act on. MCP lists them from here, so a tool added here appears over MCP with no other code.
 *
 * - A read tool runs its procedure and needs its permission.
 * - A change tool never runs directly: it makes a proposal (an AI approval) with a readable summary
 *   and a field-by-field diff, which the member who connected the client approves, unless the store
 *   lets changes through without approval.
 */
export interface Change {
  field: string;
  from: unknown;
  to: unknown;
}

export interface Proposal {
  summary: string;
  diff: Change[];
}

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
  /** Reads what the change would touch and says what it would do, before anything changes. */
  describe(tx: StoreTx, input: z.output<I>, store: StoreInfo): Promise<Proposal>;
}

export type Tool = ReadTool | ChangeTool;

export const permissionOf = (tool: Tool): Permission => {
  if (tool.procedure.access === "none") throw new Error(`Tool ${tool.name} maps to a procedure without a permission`);
  return tool.procedure.access;
};

const read = (name: string, procedure: StoreProcedure, description: string): ReadTool => ({ kind: "read", name, procedure, description });

function change<I extends z.ZodType>(name: string, procedure: StoreProcedure<I>, description: string, describe: ChangeTool<I>["describe"]): ChangeTool {
  return { kind: "change", name, procedure, description, describe } as unknown as ChangeTool;
}

const money = (minor: number | null | undefined, currency: string) =>
  minor === null || minor === undefined ? "none" : new Intl.NumberFormat("en-IN", { style: "currency", currency }).format(minor / 100);

function diffOf(current: Record<string, unknown>, wanted: Record<string, unknown>, fields: readonly string[]): Change[] {
  return fields.filter((f) => wanted[f] !== undefined && wanted[f] !== current[f]).map((f) => ({ field: f, from: current[f] ?? null, to: wanted[f] }));
}

const show = (v: unknown) => (typeof v === "string" ? (v.length > 60 ? `"${v.slice(0, 57)}…"` : `"${v}"`) : JSON.stringify(v));
const sentence = (diff: Change[]) => diff.map((d) => `${d.field} ${show(d.from)} → ${show(d.to)}`).join("; ");

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
  read("listDiscounts", listDiscounts, "List discount codes with their kind, value, validity window, usage and state (live, scheduled, expired, used_up, disabled)."),
  read("listPages", listPages, "List the store's content pages (title, handle, status) without their text."),
  read("getPage", getPage, "Get one content page by `id`, with its text."),
  read("salesSummary", salesSummary, "Counts and totals for a date range (`from`, `to` as YYYY-MM-DD, UTC): products, customers, stock units and value, discounts, pages."),
  change(
    "updateProduct",
    updateProduct,
    "Propose changes to a product (`id` plus the fields to change; `variants` with an `id` change those variants, without one add new ones). The store's member approves before it happens unless approval is switched off.",
    async (tx, input, store) => {
      const current = await loadProduct(tx, input.id);
      const diff = diffOf(current, input, ["title", "handle", "description", "status", "vendor", "hsnCode"]);
      for (const v of input.variants ?? []) {
        if ("id" in v) {
          const was = current.variants.find((x) => x.id === v.id);
          if (!was) throw new AppError("NOT_FOUND", `Variant ${v.id} is not a variant of this product.`);
          const label = was.sku ?? was.title;
          for (const d of diffOf(was, v, ["title", "sku", "priceMinor", "compareAtMinor", "taxClass", "preorder"])) {
            const money_ = d.field === "priceMinor" || d.field === "compareAtMinor";
            diff.push({ field: `${label}.${d.field}`, from: money_ ? money(d.from as number, store.currency) : d.from, to: money_ ? money(d.to as number, store.currency) : d.to });
          }
        } else diff.push({ field: "new variant", from: null, to: `${v.title ?? "Default"} ${money(v.priceMinor, store.currency)}${v.sku ? ` (${v.sku})` : ""}` });
      }
      return { summary: `Update product "${current.title}": ${diff.length ? sentence(diff) : "no changes"}.`, diff };
    },
  ),
  change(
    "adjustInventory",
    adjustInventory,
    "Propose a stock adjustment: `delta` units (positive to add, negative to remove) of `variantId` at `locationId`, with a `reason` (received, correction, damaged, shrinkage, returned, recount, other).",
    async (tx, input) => {
      const [v] = await tx.select({ sku: productVariant.sku, title: productVariant.title }).from(productVariant).where(and(eq(productVariant.storeId, tx.storeId), eq(productVariant.id, input.variantId)));
      const [l] = await tx.select({ name: location.name }).from(location).where(and(eq(location.storeId, tx.storeId), eq(location.id, input.locationId)));
      if (!v) throw new AppError("NOT_FOUND", "Variant not found in this store.");
      if (!l) throw new AppError("NOT_FOUND", "Location not found in this store.");
      const label = v.sku ?? v.title;
      return {
        summary: `Adjust stock of ${label} at ${l.name} by ${input.delta > 0 ? "+" : ""}${input.delta} (${input.reason}).`,
        diff: [{ field: `${label} at ${l.name}`, from: "current on hand", to: `${input.delta > 0 ? "+" : ""}${input.delta}` }],
      };
    },
  ),
  change(
    "createDiscount",
    createDiscount,
    "Propose a new discount code: `code`, `kind` (percentage or fixed_amount), `value` (whole percent, or minor units), optional `startsAt`, `endsAt` (ISO times) and `usageLimit`.",
    async (_tx, input, store) => {
      const value = input.kind === "percentage" ? `${input.value}% off` : `${money(input.value, store.currency)} off`;
      const window = input.endsAt ? ` until ${input.endsAt}` : "";
      const limit = input.usageLimit ? `, at most ${input.usageLimit} uses` : "";
      return { summary: `Create discount ${input.code.toUpperCase()}: ${value}${window}${limit}.`, diff: [{ field: "discount", from: null, to: { ...input } }] };
    },
  ),
  change(
    "updatePage",
    updatePage,
    "Propose changes to a content page (`id` plus `title`, `handle` or `body`).",
    async (tx, input) => {
      const current = await loadPage(tx, input.id);
      const diff = diffOf(current, input, ["title", "handle"]);
      if (input.body !== undefined && input.body !== current.body) diff.push({ field: "body", from: `${current.body.length} characters`, to: `${input.body.length} characters` });
      return { summary: `Update page "${current.title}": ${diff.length ? sentence(diff) : "no changes"}.`, diff };
    },
  ),
];

const BY_NAME = new Map(TOOLS.map((t) => [t.name, t]));
if (BY_NAME.size !== TOOLS.length) throw new Error("Two tools share a name");

export function findTool(name: string): Tool | undefined {
  return BY_NAME.get(name);
}

/** The change tool that describes a procedure's changes, when the assistant has one. */
export function changeToolFor(proc: Procedure): ChangeTool | undefined {
  return TOOLS.find((t): t is ChangeTool => t.kind === "change" && t.procedure === proc);
}

/**
 * A change without a tool of its own (an OAuth connection calling /api/v1): every field it would set,
 * in full, so the approver reads exactly what will be sent.
 */
export function describeCall(proc: Procedure, input: Record<string, unknown>): Proposal {
  const diff = Object.entries(input).map(([field, to]) => ({ field, from: null, to }));
  return { summary: `${proc.description.split(". ")[0]!.replace(/\.$/, "")}: ${procedureKey(proc)} with ${diff.map((d) => d.field).join(", ") || "no fields"}.`, diff };
}

/** The tools a caller sees: their permission in the caller's effective set; change tools only while the store allows changes. */
export function visibleTools(permissions: ReadonlySet<Permission>, store: StoreInfo): Tool[] {
  return TOOLS.filter((t) => permissions.has(permissionOf(t)) && (t.kind === "read" || store.mcpAllowChanges));
}
