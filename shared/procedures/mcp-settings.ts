import { and, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, unchanged } from "../db/changes";
import { constant, plan } from "../db/plan";
import { store } from "../db/schema";
import type { Q } from "../db/steps";
import { storeProcedure } from "./define";

/**
 * The store's AI-client (MCP) settings (SPEC "Store settings"), shown on Settings → MCP & API:
 *   - readCustomerDetails ('Let clients read customer details'): the customer-details tool answers;
 *   - allowChanges ('Allow AI clients to make changes'): change tools are listed at all;
 *   - changesNeedApproval ('Changes need approval'): a change an AI client proposes waits for the
 *     member who connected it to approve it, instead of running at once.
 * Owners and Admins (settings.read / settings.write) only; never reachable with a token.
 */

const columns = {
  readCustomerDetails: store.mcpReadCustomerDetails,
  allowChanges: store.mcpAllowChanges,
  changesNeedApproval: store.mcpChangesNeedApproval,
};

export type McpSettings = { readCustomerDetails: boolean; allowChanges: boolean; changesNeedApproval: boolean };
type Field = keyof McpSettings;
const FIELDS = Object.keys(columns) as Field[];

function settingsPlan(q: Q, storeId: SQL) {
  return plan([q.select(columns).from(store).where(eq(store.id, storeId))] as const, ([[row]]): McpSettings => {
    // The caller's opening already found this store in the same transaction.
    if (!row) throw new Error("mcpSettings: store row missing");
    return row;
  });
}

const mcpSettingsOutput = z.object({ readCustomerDetails: z.boolean(), allowChanges: z.boolean(), changesNeedApproval: z.boolean() });

export const getMcpSettings = storeProcedure({
  router: "mcpSettings",
  name: "get",
  description:
    "The store's AI-client settings: readCustomerDetails (clients may read customers' contact details), allowChanges (clients may propose changes at all) and changesNeedApproval (each change waits for a member's approval).",
  access: "settings.read",
  mutates: false,
  output: mcpSettingsOutput,
  input: z.strictObject({}),
  read: (q, { store: storeId }) => settingsPlan(q, storeId),
});

export const updateMcpSettings = storeProcedure({
  router: "mcpSettings",
  name: "update",
  description:
    "Change the store's AI-client settings: give any of readCustomerDetails, allowChanges and changesNeedApproval as true or false; the others stay. Setting a value it already has changes nothing. Answers the settings as they now are.",
  access: "settings.write",
  mutates: true,
  output: mcpSettingsOutput,
  input: z
    .strictObject({
      readCustomerDetails: z.boolean().optional().describe("Let AI clients read customers' contact details (email, phone, city)"),
      allowChanges: z.boolean().optional().describe("Let AI clients make changes (products, stock, discounts, pages) at all"),
      changesNeedApproval: z.boolean().optional().describe("Each change an AI client proposes waits for approval before it runs"),
    })
    .refine((v) => FIELDS.some((f) => v[f] !== undefined), {
      message: "Give at least one of readCustomerDetails, allowChanges or changesNeedApproval.",
    }),
  write: {
    // The event names the fields whose value changes, so the settings are read first; the change checks they
    // are still as read (the store row locked). Setting the values the store has changes nothing.
    prepare: (q, scope) => settingsPlan(q, scope.store),
    apply(q, scope, input, before: McpSettings) {
      const changed = FIELDS.filter((f) => input[f] !== undefined && input[f] !== before[f]);
      if (changed.length === 0) return constant(before);
      const after: McpSettings = { ...before };
      for (const f of changed) after[f] = input[f]!;
      const asRead = and(...FIELDS.map((f) => eq(columns[f], before[f])));
      return plan(
        [
          unchanged(q, sql`exists (select 1 from ${store} where ${store.id} = ${scope.store} and ${asRead} for update)`),
          q
            .update(store)
            .set({
              mcpReadCustomerDetails: after.readCustomerDetails,
              mcpAllowChanges: after.allowChanges,
              mcpChangesNeedApproval: after.changesNeedApproval,
              updatedAt: sql`now()`,
            })
            .where(eq(store.id, scope.store)),
          emitStep(q, "store.mcp_settings_updated", { fields: changed }),
        ] as const,
        () => after,
      );
    },
  },
});

export const mcpSettingsProcedures = [getMcpSettings, updateMcpSettings];
