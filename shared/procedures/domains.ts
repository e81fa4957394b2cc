import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emit } from "../db/outbox";
import { mapPlan, plan } from "../db/plan";
import { domainCheck, storeDomain } from "../db/schema";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import { CHECK_RESULT_TEXT, verificationRecord } from "../domains/dns";
import { AppError } from "../http/errors";
import { normaliseHostname } from "../storefront/hosts";
import { storeProcedure, type StoreContext } from "./define";

/**
 * A store's custom domains (issue 10 part 6; verification and routing: docs/domains.md). A hostname
 * belongs to at most one store (a unique index across stores). A domain starts `pending` and serves
 * nothing until the {domains}-verify job finds its TXT record and turns it `verified` (or `failed` after
 * 7 days); the {domains}-route consumer then routes it at the edge. Every change that alters what a hostname serves overwrites its HOSTS cache
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

/** Domains with what the merchant needs to see: the TXT record's token, the route and the last check. */
const selectDetail = (q: Q, where: SQL | undefined) =>
  q
    .select({
      ...columns,
      verificationToken: storeDomain.verificationToken,
      routerStatus: storeDomain.routerStatus,
      routerSslStatus: storeDomain.routerSslStatus,
      lastCheckedAt: domainCheck.lastCheckedAt,
      lastResult: domainCheck.lastResult,
      checks: domainCheck.checks,
      nextCheckAt: domainCheck.nextCheckAt,
    })
    .from(storeDomain)
    .leftJoin(domainCheck, eq(domainCheck.domainId, storeDomain.id))
    .where(where)
    .orderBy(asc(storeDomain.hostname));

type DetailRow = Awaited<ReturnType<typeof selectDetail>>[number];

const detailPlan = (q: Q, where: SQL | undefined) => plan([selectDetail(q, where)] as const, ([rows]) => rows.map(present));

function present(r: DetailRow) {
  const { verificationToken, routerStatus, routerSslStatus, lastCheckedAt, lastResult, checks, nextCheckAt, ...domain } = r;
  return {
    ...domain,
    /** The TXT record that verifies the domain. */
    verification: { type: "TXT" as const, ...verificationRecord(r.hostname, verificationToken) },
    /** The custom hostname at the edge once the domain is verified: the router's status and its certificate's. */
    routing: routerStatus === null ? null : { status: routerStatus, sslStatus: routerSslStatus },
    lastCheck:
      lastCheckedAt === null || lastResult === null
        ? null
        : { at: lastCheckedAt, result: lastResult, message: CHECK_RESULT_TEXT[lastResult], checks: checks ?? 1, nextAt: r.status === "pending" ? nextCheckAt : null },
  };
}

async function findDomain(ctx: StoreContext, id: string) {
  const [row] = await ctx.tx
    .select({ ...columns, routerId: storeDomain.routerId })
    .from(storeDomain)
    .where(and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.id, id)));
  if (!row) throw new AppError("NOT_FOUND", "Domain not found in this store.");
  return row;
}

export const listDomains = storeProcedure({
  router: "domains",
  name: "list",
  description:
    "The store's domains with their state (pending until the TXT record in `verification` is found, then verified; failed after 7 days without it), which one is primary, the last DNS check and its outcome, and the edge routing of verified ones.",
  access: "settings.read",
  mutates: false,
  input: z.strictObject({}),
  read: (q, { store }) => mapPlan(detailPlan(q, eq(storeDomain.storeId, store)), (items) => ({ items })),
});

export const addDomain = storeProcedure({
  router: "domains",
  name: "add",
  description:
    "Connect a hostname to the store. It stays pending, serving nothing, until the TXT record it answers (`verification`: name and value) is found by the domains job. A hostname can belong to one store only.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ hostname: hostnameInput }),
  async run(ctx, input) {
    const [row] = await ctx.tx.insert(storeDomain).values({ storeId: ctx.tx.storeId, hostname: input.hostname }).returning(columns);
    await emit(ctx.tx, "domain.added", { domainId: row!.id, hostname: row!.hostname });
    // A pending domain serves nothing: replace any entry cached while the hostname belonged elsewhere.
    await ctx.services?.hostsChanged?.([{ hostname: row!.hostname, storeId: null }]);
    const [added] = await runPlanOn(ctx.tx.$client as unknown as StatementClient, (q) =>
      detailPlan(q, and(eq(storeDomain.storeId, ctx.tx.storeId), eq(storeDomain.id, row!.id))),
    );
    return added!;
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
    // The route consumer deletes the custom hostname by this id (null: never routed, or not yet).
    await emit(ctx.tx, "domain.removed", { domainId: row.id, hostname: row.hostname, routerId: row.routerId });
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
    const { routerId: _routerId, ...domain } = row;
    return { ...domain, isPrimary: true };
  },
});

export const domainProcedures = [listDomains, addDomain, removeDomain, setPrimaryDomain];
