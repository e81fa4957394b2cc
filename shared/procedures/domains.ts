import { and, asc, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { emit } from "../db/outbox";
import { storeDomain } from "../db/schema";
import { AppError } from "../http/errors";
import { normaliseHostname } from "../storefront/hosts";
import { storeProcedure, type StoreContext } from "./define";

/**
 * A store's custom domains (issue 10 part 6). A hostname belongs to at most one store (a unique index
 * across stores). A domain starts `pending` and serves nothing until the domains job verifies its DNS
 * and turns it `verified`. Every change that alters what a hostname serves overwrites its HOSTS cache
 * entry at once through the door's `hostsChanged` service (ARCHITECTURE §13), so a removed domain
 * stops serving on the next request instead of up to 60 s later.
 */

const hostnameInput = z
  .string()
  .trim()
  .max(253)
  .transform((raw, ctx) => {
    const host = normaliseHostname(raw);
    // A custom domain has at least one dot: `localhost`-like names can never be pointed at us.
    if (!host || !host.includes(".")) {
      ctx.addIssue({ code: "custom", message: "Enter a hostname such as shop.example.com (no scheme, path or port)." });
      return z.NEVER;
    }
    return host;
  });

const columns = {
  id: storeDomain.id,
  hostname: storeDomain.hostname,
  status: storeDomain.status,
  isPrimary: storeDomain.isPrimary,
  verifiedAt: storeDomain.verifiedAt,
  createdAt: storeDomain.createdAt,
};

async function findDomain(ctx: StoreContext, id: string) {
  const [row] = await ctx.tx.select(columns).from(storeDomain).where(and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.id, id)));
  if (!row) throw new AppError("NOT_FOUND", "Domain not found in this store.");
  return row;
}

export const listDomains = storeProcedure({
  router: "domains",
  name: "list",
  description: "The store's domains with their state (pending until DNS is verified, then verified), which one is primary, and the DNS record each needs.",
  access: "settings.read",
  mutates: false,
  input: z.strictObject({}),
  async run({ tx }) {
    const rows = await tx.select(columns).from(storeDomain).where(eq(storeDomain.storeId, tx.storeId)).orderBy(asc(storeDomain.hostname));
    return { items: rows };
  },
});

export const addDomain = storeProcedure({
  router: "domains",
  name: "add",
  description: "Connect a hostname to the store. It stays pending, serving nothing, until its DNS points at the storefront and is verified. A hostname can belong to one store only.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ hostname: hostnameInput }),
  async run(ctx, input) {
    const [row] = await ctx.tx.insert(storeDomain).values({ storeId: ctx.tx.storeId, hostname: input.hostname }).returning(columns);
    await emit(ctx.tx, "domain.added", { domainId: row!.id, hostname: row!.hostname });
    // A pending domain serves nothing: replace any entry cached while the hostname belonged elsewhere.
    await ctx.services?.hostsChanged?.([{ hostname: row!.hostname, storeId: null }]);
    return row!;
  },
});

export const removeDomain = storeProcedure({
  router: "domains",
  name: "remove",
  description: "Disconnect a domain: it stops serving the store at once. The primary domain can be removed only when it is the last one.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ id: z.uuid() }),
  async run(ctx, input) {
    const row = await findDomain(ctx, input.id);
    if (row.isPrimary) {
      const [others] = await ctx.tx
        .select({ n: sql<number>`count(*)::int` })
        .from(storeDomain)
        .where(and(eq(storeDomain.storeId, ctx.tx.storeId), sql`${storeDomain.id} <> ${row.id}`));
      if ((others?.n ?? 0) > 0) {
        throw new AppError("CONFLICT", "This is the primary domain. Make another domain primary first.", { issues: [{ path: "id", message: "primary domain" }] });
      }
    }
    await ctx.tx.delete(storeDomain).where(and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.id, row.id)));
    await emit(ctx.tx, "domain.removed", { domainId: row.id, hostname: row.hostname });
    await ctx.services?.hostsChanged?.([{ hostname: row.hostname, storeId: null }]);
    return { id: row.id, hostname: row.hostname, removed: true };
  },
});

export const setPrimaryDomain = storeProcedure({
  router: "domains",
  name: "setPrimary",
  description: "Make a verified domain the store's primary one: the address used in links and for search engines.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ id: z.uuid() }),
  async run(ctx, input) {
    const row = await findDomain(ctx, input.id);
    if (row.status !== "verified") {
      throw new AppError("CONFLICT", "Only a verified domain can be primary. Point its DNS at the storefront and wait for verification.", {
        issues: [{ path: "id", message: "not verified" }],
      });
    }
    if (!row.isPrimary) {
      await ctx.tx.update(storeDomain).set({ isPrimary: false, updatedAt: sql`now()` }).where(and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.isPrimary, true)));
      await ctx.tx.update(storeDomain).set({ isPrimary: true, updatedAt: sql`now()` }).where(and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.id, row.id)));
      await emit(ctx.tx, "domain.primary_changed", { domainId: row.id, hostname: row.hostname });
    }
    return { ...row, isPrimary: true };
  },
});

export const domainProcedures = [listDomains, addDomain, removeDomain, setPrimaryDomain];
