import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { ROLE_LABELS } from "../auth/permissions";
import { hashPassword } from "../auth/password";
import { emit } from "../db/outbox";
import { plan } from "../db/plan";
import { storeIdsForUser } from "../db/privileged";
import { session, store, storeDomain } from "../db/schema";
import { sessionProcedure, storeProcedure } from "./define";

export const currentStore = storeProcedure({
  router: "store",
  name: "current",
  description: "The store's settings: name, currency, storefront password, domains, the MCP & API switches and the pre-order deposit percent.",
  access: "settings.read",
  mutates: false,
  input: z.strictObject({}),
  read: (q, { store: storeId }) =>
    plan(
      [
        q
          .select({
            id: store.id,
            slug: store.slug,
            name: store.name,
            currency: store.currency,
            storefrontPasswordEnabled: sql<boolean>`${store.storefrontPasswordHash} is not null`,
            mcpReadCustomerDetails: store.mcpReadCustomerDetails,
            mcpAllowChanges: store.mcpAllowChanges,
            mcpChangesNeedApproval: store.mcpChangesNeedApproval,
            preorderDepositPercent: store.preorderDepositPercent,
            createdAt: store.createdAt,
            updatedAt: store.updatedAt,
          })
          .from(store)
          .where(eq(store.id, storeId)),
        q
          .select({ hostname: storeDomain.hostname, status: storeDomain.status, isPrimary: storeDomain.isPrimary })
          .from(storeDomain)
          .where(eq(storeDomain.storeId, storeId))
          .orderBy(asc(storeDomain.hostname)),
      ] as const,
      ([[row], domains]) => ({ ...row!, domains }),
    ),
});

export const updateStore = storeProcedure({
  router: "store",
  name: "update",
  description:
    "Change store settings: the name, the storefront password (null turns it off), the MCP & API switches and preorderDepositPercent (1-100: the share of backordered pre-order units paid at checkout, the balance asked for when they arrive; 100 pays in full). The currency is fixed once a store exists.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    storefrontPassword: z.string().min(8).max(128).nullable().optional(),
    mcpReadCustomerDetails: z.boolean().optional(),
    mcpAllowChanges: z.boolean().optional(),
    mcpChangesNeedApproval: z.boolean().optional(),
    preorderDepositPercent: z.number().int("must be a whole number").min(1, "must be at least 1").max(100, "must be at most 100").optional(),
  }),
  async run(ctx, input) {
    const { storefrontPassword, ...fields } = input;
    const changes: Partial<typeof store.$inferInsert> = { ...fields };
    if (storefrontPassword !== undefined) {
      changes.storefrontPasswordHash = storefrontPassword === null ? null : await hashPassword(storefrontPassword);
    }
    const changed = Object.keys(input);
    if (changed.length > 0) {
      await ctx.tx
        .update(store)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(eq(store.id, ctx.tx.storeId));
      // The event names what changed, never the password itself.
      await emit(ctx.tx, "store.updated", { fields: changed });
    }
    return currentStore.run(ctx, {});
  },
});

/** The stores the signed-in person belongs to, with their role in each. */
export const listMyStores = sessionProcedure({
  router: "store",
  name: "list",
  description: "The stores you are a member of, with your role in each.",
  mutates: false,
  input: z.strictObject({}),
  async run({ db, session: s, membershipIn }) {
    const ids = await storeIdsForUser(db, s.userId);
    const stores = await Promise.all(
      ids.map((id) =>
        membershipIn(id).then(
          ({ store: st, member }) => ({ id: st.id, slug: st.slug, name: st.name, role: member.role, roleLabel: ROLE_LABELS[member.role] }),
          () => null, // removed between the two reads: not listed
        ),
      ),
    );
    return stores
      .filter((x) => x !== null)
      .map((x) => ({ ...x, active: x.id === s.activeStoreId }))
      .sort((a, b) => a.name.localeCompare(b.name));
  },
});

export const switchStore = sessionProcedure({
  router: "store",
  name: "switch",
  description: "Make one of your stores the active store of this session.",
  mutates: true,
  input: z.strictObject({ storeId: z.uuid() }),
  async run({ db, session: s, membershipIn }, input) {
    const { store: st, member } = await membershipIn(input.storeId);
    await db.orm
      .update(session)
      .set({ activeStoreId: st.id })
      .where(and(eq(session.idHash, s.idHash), eq(session.userId, s.userId)));
    return { store: { id: st.id, slug: st.slug, name: st.name }, role: member.role };
  },
});

export const storeProcedures = [currentStore, updateStore, listMyStores, switchStore];
