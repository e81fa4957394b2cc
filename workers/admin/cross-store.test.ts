import { describe, expect, it } from "vitest";
import { z } from "zod";
import { withStore } from "#shared/db/with-store";
import { isSessionProcedure, procedureKey } from "#shared/procedures/define";
import { PROCEDURES } from "#shared/registry/procedures";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { AREA_SCOPES } from "#shared/auth/grants";
import { api, createToken, rpc, sessionFor } from "../../test/admin";

const db = testDb();

const TABLE_OF_ROUTER: Record<string, string> = {
  products: "product",
  customers: "customer",
  discounts: "discount",
  content: "page",
  collections: "collection",
  media: "product_media",
  locations: "location",
  staff: "member",
  apiGrants: "api_grant",
  aiApprovals: "ai_approval",
  assistant: "assistant_conversation",
  domains: "store_domain",
  links: "short_link",
  orders: "shop_order",
  tasks: "merchant_task",
  outbox: "outbox_event",
  apps: "store_app",
  campaigns: "campaign",
  notifications: "mailbox_message",
};
const TABLE_OF_FIELD: Record<string, string> = {
  productId: "product",
  variantId: "product_variant",
  locationId: "location",
  customerId: "customer",
  memberId: "member",
  invitationId: "staff_invitation",
  discountId: "discount",
  pageId: "page",
  grantId: "api_grant",
  orderId: "shop_order",
  parcelId: "fulfillment_order",
  shipmentId: "shipment",
  returnId: "order_return",
  appId: "store_app",
  deliveryId: "app_delivery",
};
/** Valid values for the other fields a probe needs, so the call reaches the id lookup. */
const FILLERS: Record<string, unknown> = {
  ...{ delta: 1, reason: "correction", role: "admin", published: true, action: "mark_paid" },
  lines: [{ orderLineId: "00000000-0000-4000-8000-000000000000", quantity: 1 }],
  productIds: [],
  ...{ alt: "Probe", image: { url: "https://example.com/probe.jpg" }, ids: ["00000000-0000-4000-8000-000000000000"] },
};

async function snapshot(store: TestStore): Promise<Record<string, unknown[]>> {
  const tables = [
    ...["product", "product_variant", "location", "inventory_level", "customer", "discount", "page", "member", "staff_invitation"],
    ...["api_grant", "api_activity", "ai_approval", "store_domain", "short_link", "page_view", "store"],
    ...["shop_order", "order_line", "fulfillment_order", "fulfillment_order_line", "payment_attempt", "outbox_event"],
    ...["shipment", "shipment_event", "order_return", "order_return_line", "refund", "merchant_task"],
    ...["store_app", "app_delivery", "campaign", "marketing_automation", "marketing_enrolment", "marketing_message", "restock_subscription", "mailbox_message"],
    ...["collection", "menu_item", "product_media"],
  ];
  return withStore(db, store.id, async (tx) => {
    const out: Record<string, unknown[]> = {};
    for (const t of tables) out[t] = (await tx.$client.query(`select * from ${t} order by id`)).rows;
    return out;
  });
}

async function firstIds(store: TestStore): Promise<Record<string, string>> {
  const tables = [...new Set([...Object.values(TABLE_OF_ROUTER), ...Object.values(TABLE_OF_FIELD)])];
  return withStore(db, store.id, async (tx) => {
    const ids: Record<string, string> = {};
    for (const t of tables) ids[t] = (await tx.$client.query<{ id: string }>(`select id from ${t} order by created_at limit 1`)).rows[0]!.id;
    return ids;
  });
}

/**
 * A member of store A sends ids of store B's rows to every procedure that takes an id. Each call must
 * answer NOT_FOUND or an empty result, never B's data, and B must be unchanged afterwards. Generated
 * from the registry's input schemas, so a new procedure with an id field is probed automatically.
 */
type Send = (path: string, input: unknown) => Promise<Response>;

const DOORS: { door: string; open: (a: TestStore) => Promise<Send>; refusedOk: boolean }[] = [
  {
    door: "/api/rpc (session of A's Owner)",
    open: async (a) => {
      const browser = await sessionFor(db, a.ownerUserId, a.id);
      return (path, input) => rpc(browser, path, input);
    },
    refusedOk: false,
  },
  {
    // Tokens are refused (403) on procedures no area reaches; that is never the row either.
    door: "/api/v1 (token of A's Owner with every area)",
    open: async (a) => {
      const { token } = await createToken(await sessionFor(db, a.ownerUserId, a.id), [...AREA_SCOPES]);
      return (path, input) => api(token, path, input);
    },
    refusedOk: true,
  },
];

describe.each(DOORS)("cross-store probes through $door", ({ open, refusedOk }) => {
  it("never returns or changes another store's rows, whatever ids are sent", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const before = await snapshot(b);
    const bIds = await firstIds(b);
    const send = await open(a);
    const secrets = [b.slug, b.name, ...Object.values(bIds)];
    let probed = 0;
    const problems: string[] = [];
    for (const proc of PROCEDURES) {
      if (isSessionProcedure(proc) || !(proc.input instanceof z.ZodObject)) continue;
      const shape = proc.input.shape as Record<string, unknown>;
      const idFields = Object.keys(shape).filter((k) => k === "id" || k in TABLE_OF_FIELD);
      if (idFields.length === 0) continue;
      const input: Record<string, unknown> = {};
      for (const k of Object.keys(shape)) if (k in FILLERS) input[k] = FILLERS[k];
      for (const k of idFields) {
        const table = k === "id" ? TABLE_OF_ROUTER[proc.router] : TABLE_OF_FIELD[k];
        if (!table) throw new Error(`No probe table for ${procedureKey(proc)}.${k}: add it to this test`);
        input[k] = bIds[table];
      }
      const res = await send(`${proc.router}/${proc.name}`, input);
      const text = await res.text();
      probed++;
      const leaked = secrets.filter((s) => text.includes(s) && !JSON.stringify(input).includes(s));
      const emptyList = res.status === 200 && /"total":0/.test(text) && /"items":\[\]/.test(text);
      if (leaked.length) problems.push(`${procedureKey(proc)} leaked ${leaked.join(", ")}`);
      if (res.status !== 404 && !emptyList && !(refusedOk && res.status === 403)) problems.push(`${procedureKey(proc)} answered ${res.status}: ${text.slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
    expect(probed).toBeGreaterThanOrEqual(15);
    expect(await snapshot(b)).toEqual(before);
  });
});
