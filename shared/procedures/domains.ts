import { and, asc, eq, ne, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { emitStep, ensure, markEmits } from "../db/changes";
import { mapPlan, plan } from "../db/plan";
import { DOMAIN_CHECK_RESULTS, DOMAIN_FAILED_REASONS, DOMAIN_STATUSES, domainCheck, storeDomain } from "../db/schema";
import type { Q } from "../db/steps";
import { lockDomains, primaryChanged } from "./statements/store";
import { FAILED_REASON_TEXT, heldByAStore, TAKEN_AT_ADD } from "../domains/claims";
import { CHECK_RESULT_TEXT, verificationRecord } from "../domains/dns";
import { AppError } from "../core/errors";
import { normaliseHostname } from "../storefront/hosts";
import { storeProcedure, type Services } from "./define";
import * as out from "./outputs";

/**
 * A store's custom domains (issue 10 part 6; verification and routing: docs/domains.md). A domain starts
 * `pending`, a claim that serves nothing, until the {domains}-verify job finds its TXT record and turns it
 * `verified`; the {domains}-route consumer then routes it at the edge. Several stores may claim one
 * hostname; the first verified wins it, the others' claims fail (`taken`), a claim without its record
 * lapses after 7 days (`lapsed`), and a hostname verified by one store cannot be added by another
 * (docs/domains.md "Claims"). Every change that alters what a hostname serves overwrites its HOSTS cache
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

const selectDomain = (q: Q, store: SQL, id: string) => q.select(columns).from(storeDomain).where(and(eq(storeDomain.storeId, store), eq(storeDomain.id, id)));

/** Domains with what the merchant needs to see: the TXT record's token, the route and the last check. */
const selectDetail = (q: Q, where: SQL | undefined) =>
  q
    .select({
      ...columns,
      failedReason: storeDomain.failedReason,
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
  const { verificationToken, routerStatus, routerSslStatus, lastCheckedAt, lastResult, checks, nextCheckAt, failedReason, ...domain } = r;
  return {
    ...domain,
    /** Why a failed claim failed, in the merchant's words (null unless failed). */
    failure: r.status === "failed" ? { reason: failedReason ?? "lapsed", message: FAILED_REASON_TEXT[failedReason ?? "lapsed"] } : null,
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

const domainNotFound = () => new AppError("NOT_FOUND", "Domain not found in this store.");

/** The domain exists in the store; it is locked for the rest of the change. */
const domainFound = (q: Q, store: SQL, id: string) =>
  ensure(q, sql`exists (select 1 from ${storeDomain} where ${storeDomain.storeId} = ${store} and ${storeDomain.id} = ${id} for update)`, domainNotFound());

/**
 * A removed verified domain serves nothing from now on: its HOSTS entry is overwritten once the change has
 * committed. A claim (pending or failed) never served this store, and the hostname may serve another store
 * that verified it, even one that did so while this change committed: adding or removing a claim leaves
 * the entry alone (decision 0024).
 */
async function stopsServing(answer: { hostname: string; status: string }, services: Services): Promise<void> {
  if (answer.status === "verified") await services.hostsChanged?.([{ hostname: answer.hostname, storeId: null }]);
}

const domainRow = z.object({ id: out.id, hostname: z.string(), status: z.enum(DOMAIN_STATUSES), isPrimary: z.boolean(), verifiedAt: out.instant.nullable(), createdAt: out.instant });
/** A custom domain with what to publish in DNS, how its checks went and how it is routed. */
const domainOutput = domainRow.extend({
  verification: z.object({ name: z.string(), value: z.string(), type: z.literal("TXT") }),
  failure: z.object({ reason: z.enum(DOMAIN_FAILED_REASONS), message: z.string() }).nullable(),
  routing: z.object({ status: z.string(), sslStatus: z.string().nullable() }).nullable(),
  lastCheck: z
    .object({ at: out.instant, result: z.enum(DOMAIN_CHECK_RESULTS), message: z.string(), checks: z.number().int(), nextAt: out.instant.nullable() })
    .nullable(),
});

export const listDomains = storeProcedure({
  router: "domains",
  name: "list",
  description:
    "The store's domains with their state (pending until the TXT record in `verification` is found, then verified; failed with `failure.reason` lapsed after 7 days without it, or taken when another store verified the hostname first), which one is primary, the last DNS check and its outcome, and the edge routing of verified ones.",
  access: "settings.read",
  mutates: false,
  output: z.object({ items: z.array(domainOutput) }),
  input: z.strictObject({}),
  read: (q, { store }) => mapPlan(detailPlan(q, eq(storeDomain.storeId, store)), (items) => ({ items })),
});

export const addDomain = storeProcedure({
  router: "domains",
  name: "add",
  description:
    "Connect a hostname to the store. It stays pending, serving nothing, until the TXT record it answers (`verification`: name and value) is found by the domains job. Several stores may claim a hostname: the first verified wins it. A hostname another store has verified is refused (409).",
  access: "settings.write",
  mutates: true,
  output: domainOutput,
  input: z.strictObject({ hostname: hostnameInput }),
  write: {
    apply(q, { store }, input) {
      const id = crypto.randomUUID();
      const added = detailPlan(q, and(eq(storeDomain.storeId, store), eq(storeDomain.id, id)));
      return plan(
        [
          ensure(
            q,
            sql`not exists (select 1 from ${storeDomain} where ${storeDomain.storeId} = ${store} and ${storeDomain.hostname} = ${input.hostname})`,
            new AppError("CONFLICT", "This hostname is already one of this store's domains.", { issues: [{ path: "hostname", message: "already added" }] }),
          ),
          // A claim is refused only once another store has won the hostname; pending claims elsewhere do not count.
          ensure(q, sql`not ${heldByAStore(input.hostname)}`, new AppError("CONFLICT", TAKEN_AT_ADD, { issues: [{ path: "hostname", message: "verified by another store" }], reason: "hostname_taken" })),
          q.insert(storeDomain).values({ id, storeId: store, hostname: input.hostname }),
          emitStep(q, "domain.added", { domainId: id, hostname: input.hostname }),
          ...added.steps,
        ],
        (results) => added.finish(results.slice(4))[0]!,
      );
    },
  },
});

export const removeDomain = storeProcedure({
  router: "domains",
  name: "remove",
  description: "Disconnect a domain: it stops serving the store at once. The primary domain can be removed only when it is the last one.",
  access: "settings.write",
  mutates: true,
  output: z.object({ id: out.id, hostname: z.string(), status: z.enum(DOMAIN_STATUSES), removed: z.literal(true) }),
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const domain = and(eq(storeDomain.storeId, store), eq(storeDomain.id, input.id));
      return plan(
        [
          domainFound(q, store, input.id),
          ensure(
            q,
            sql`not exists (select 1 from ${storeDomain} where ${domain} and ${storeDomain.isPrimary})
              or not exists (select 1 from ${storeDomain} where ${storeDomain.storeId} = ${store} and ${storeDomain.id} <> ${input.id})`,
            new AppError("CONFLICT", "This is the primary domain. Make another domain primary first.", { issues: [{ path: "id", message: "primary domain" }] }),
          ),
          // The route consumer deletes the custom hostname by this id (null: never routed, or not yet), and
          // touches nothing for a claim that never verified (its status and verifiedAt say so).
          emitStep(
            q,
            "domain.removed",
            sql`(select jsonb_build_object('domainId', ${storeDomain.id}, 'hostname', ${storeDomain.hostname}, 'routerId', ${storeDomain.routerId},
                  'status', ${storeDomain.status}, 'verifiedAt', to_char(${storeDomain.verifiedAt} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
                from ${storeDomain} where ${domain})`,
          ),
          q.delete(storeDomain).where(domain).returning({ id: storeDomain.id, hostname: storeDomain.hostname, status: storeDomain.status }),
        ] as const,
        ([, , , [row]]) => ({ id: row!.id, hostname: row!.hostname, status: row!.status, removed: true }),
      );
    },
    after: stopsServing,
  },
});

export const setPrimaryDomain = storeProcedure({
  router: "domains",
  name: "setPrimary",
  description: "Make a verified domain the store's primary one: the address used in links and for search engines.",
  access: "settings.write",
  mutates: true,
  output: domainRow,
  input: z.strictObject({ id: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const domain = and(eq(storeDomain.storeId, store), eq(storeDomain.id, input.id));
      const becomes = sql`not ${storeDomain.isPrimary}`;
      return plan(
        [
          // The store's domains are locked first, so two changes of the primary run one after the other.
          lockDomains(q, store),
          domainFound(q, store, input.id),
          ensure(
            q,
            sql`exists (select 1 from ${storeDomain} where ${domain} and ${storeDomain.status} = 'verified')`,
            new AppError("CONFLICT", "Only a verified domain can be primary. Point its DNS at the storefront and wait for verification.", {
              issues: [{ path: "id", message: "not verified" }],
            }),
          ),
          // Nothing changes, and no event is sent, when the domain is primary already.
          markEmits(primaryChanged(q, store, domain)),
          q
            .update(storeDomain)
            .set({ isPrimary: false, updatedAt: sql`now()` })
            .where(and(eq(storeDomain.storeId, store), eq(storeDomain.isPrimary, true), ne(storeDomain.id, input.id))),
          q.update(storeDomain).set({ isPrimary: true, updatedAt: sql`now()` }).where(and(domain, becomes)),
          selectDomain(q, store, input.id),
        ] as const,
        ([, , , , , , [row]]) => row!,
      );
    },
  },
});

export const domainProcedures = [listDomains, addDomain, removeDomain, setPrimaryDomain];
