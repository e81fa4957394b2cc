import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { ROLE_LABELS } from "../auth/permissions";
import { hashPassword } from "../auth/password";
import { emitStep } from "../db/changes";
import { constant, plan, thenPlan } from "../db/plan";
import type { Q } from "../db/steps";
import { sendAlone } from "../db/statement";
import { admitOnly, storesOfSession as storesOfSessionStatement } from "./statements/store";
import { SESSION_LIFETIMES } from "../auth/sessions";
import type { Database } from "../db/database";
import { pgErrorOf } from "../db/pg-errors";
import { DOMAIN_STATUSES, ROLES, session, store, storeDomain, type RoleName } from "../db/schema";
import { TRANSFER_HOLD_HOURS } from "../orders/holds";
import { sessionProcedure, storeProcedure, type SessionInfo } from "./define";
import * as out from "./outputs";

/** The store's settings and domains, as store.current answers them. */
function storePlan(q: Q, storeId: SQL) {
  return plan(
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
          manualTransferEnabled: store.manualTransferEnabled,
          transferHoldHours: store.transferHoldHours,
          assistantDailyTokens: store.assistantDailyTokens,
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
  );
}

/** The store's settings and domains as the store procedures answer them. */
const storeOutput = z.object({
  id: out.id,
  slug: z.string(),
  name: z.string(),
  currency: z.string(),
  storefrontPasswordEnabled: z.boolean(),
  mcpReadCustomerDetails: z.boolean(),
  mcpAllowChanges: z.boolean(),
  mcpChangesNeedApproval: z.boolean(),
  preorderDepositPercent: z.number().int(),
  manualTransferEnabled: z.boolean(),
  transferHoldHours: z.number().int(),
  assistantDailyTokens: z.number().int(),
  createdAt: out.instant,
  updatedAt: out.instant,
  domains: z.array(z.object({ hostname: z.string(), status: z.enum(DOMAIN_STATUSES), isPrimary: z.boolean() })),
});

export const currentStore = storeProcedure({
  router: "store",
  name: "current",
  description:
    "The store's settings: name, currency, storefront password, domains, the MCP & API switches, the pre-order deposit percent, whether checkout offers bank transfer, how many hours a transfer order holds its stock, and the assistant's daily token budget.",
  access: "settings.read",
  mutates: false,
  output: storeOutput,
  input: z.strictObject({}),
  read: (q, { store: storeId }) => storePlan(q, storeId),
});

export const updateStore = storeProcedure({
  router: "store",
  name: "update",
  description:
    `Change store settings: the name, the storefront password (null turns it off), the MCP & API switches, preorderDepositPercent (1-100: the share of backordered pre-order units paid at checkout, the balance asked for when they arrive; 100 pays in full), manualTransferEnabled (checkout offers bank transfer; off for a new store), transferHoldHours (${TRANSFER_HOLD_HOURS.min}-${TRANSFER_HOLD_HOURS.max}, default ${TRANSFER_HOLD_HOURS.default}: how long a bank-transfer order holds its stock unpaid before it is released) and assistantDailyTokens (0-100,000,000 model tokens a day for the store's assistant; 0 turns it off). The currency is fixed once a store exists.`,
  access: "settings.write",
  mutates: true,
  output: storeOutput,
  input: z.strictObject({
    name: z.string().trim().min(1).max(200).optional(),
    storefrontPassword: z.string().min(8).max(128).nullable().optional(),
    mcpReadCustomerDetails: z.boolean().optional(),
    mcpAllowChanges: z.boolean().optional(),
    mcpChangesNeedApproval: z.boolean().optional(),
    preorderDepositPercent: z.number().int("must be a whole number").min(1, "must be at least 1").max(100, "must be at most 100").optional(),
    manualTransferEnabled: z.boolean().optional(),
    transferHoldHours: z
      .number()
      .int("must be a whole number of hours")
      .min(TRANSFER_HOLD_HOURS.min, `must be at least ${TRANSFER_HOLD_HOURS.min} hour`)
      .max(TRANSFER_HOLD_HOURS.max, `must be at most ${TRANSFER_HOLD_HOURS.max} hours (7 days)`)
      .optional(),
    assistantDailyTokens: z
      .number()
      .int("must be a whole number of tokens")
      .min(0, "must be 0 (the assistant off) or more")
      .max(100_000_000, "must be at most 100,000,000")
      .optional(),
  }),
  write: {
    // A new password is hashed (PBKDF2: real CPU) only once the first unit has admitted the caller, so a
    // caller without settings.write cannot make the Worker spend it: two trips then, one otherwise.
    prepare: (q, _scope, input) =>
      typeof input.storefrontPassword === "string"
        ? plan([admitOnly(q)] as const, () => passwordHashOf(input.storefrontPassword))
        : constant(input.storefrontPassword),
    apply(q, { store: storeId }, input, passwordHash: string | null | undefined) {
      const { storefrontPassword, ...fields } = input;
      const changed = Object.keys(input);
      const settings = storePlan(q, storeId);
      if (changed.length === 0) return settings;
      const changes: Partial<typeof store.$inferInsert> = { ...fields, ...(storefrontPassword !== undefined ? { storefrontPasswordHash: passwordHash ?? null } : {}) };
      return thenPlan(
        [
          q.update(store).set({ ...changes, updatedAt: sql`now()` }).where(eq(store.id, storeId)),
          // The event names what changed, never the password itself.
          emitStep(q, "store.updated", { fields: changed }),
        ],
        settings,
      );
    },
  },
});

/** The storefront password's hash (null turns it off; undefined leaves it as it is). */
async function passwordHashOf(password: string | null | undefined): Promise<string | null | undefined> {
  return typeof password === "string" ? hashPassword(password) : password;
}

/** The stores the signed-in person belongs to, with their role in each. */
export const listMyStores = sessionProcedure({
  router: "store",
  name: "list",
  description: "The stores you are a member of, with your role in each.",
  mutates: false,
  output: z.array(z.object({ id: out.id, slug: z.string(), name: z.string(), role: z.enum(ROLES), roleLabel: z.string(), active: z.boolean() })),
  input: z.strictObject({}),
  async run({ db, session: s }) {
    const found = await storesOfSession(db, s.idHash);
    return found ? found.stores : [];
  },
});

/** A member's store as the picker lists it. */
export interface MyStore {
  id: string;
  slug: string;
  name: string;
  role: RoleName;
  roleLabel: string;
  active: boolean;
}

/**
 * A session and the stores its person is a member of, each read inside its own store, in one round
 * trip (migration 0029); null when the session is unknown or has ended. Sorted by name.
 */
export async function storesOfSession(db: Database, idHash: string): Promise<{ session: SessionInfo & { touch: boolean }; stores: MyStore[] } | null> {
  try {
    const [row] = await sendAlone(db, storesOfSessionStatement, idHash, SESSION_LIFETIMES.idleSeconds, SESSION_LIFETIMES.touchAfterSeconds);
    const { session, stores } = row!.found;
    return {
      session,
      stores: stores
        .map((x) => ({ ...x, roleLabel: ROLE_LABELS[x.role], active: x.id === session.activeStoreId }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    };
  } catch (e) {
    if (pgErrorOf(e)?.code === "CR002") return null;
    throw e;
  }
}

export const switchStore = sessionProcedure({
  router: "store",
  name: "switch",
  description: "Make one of your stores the active store of this session.",
  mutates: true,
  output: z.object({ store: z.object({ id: out.id, slug: z.string(), name: z.string() }), role: z.enum(ROLES) }),
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
