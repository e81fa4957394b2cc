import type { SQL, SQLWrapper } from "drizzle-orm";
import { isUuid } from "./ids";
import { outboxEvent, store, storeTheme } from "./schema";
import { orNull, pg, statement as declare } from "./statement";
import { CURRENT_STORE as UNIT_STORE, sql } from "./steps";

/**
 * The fixed statements a store unit's opening message may carry (STYLE 14: no helper takes SQL text from
 * its caller). The opening message travels in Postgres' simple protocol, which has no bind parameters,
 * so each parameter is typed and checked here before it is written into the statement as a literal;
 * every kind below can only hold characters that need no quoting. The same statements also run with
 * ordinary bind parameters inside a transaction (`text` + `params`).
 */
type ParamKind = "uuid" | "hex64" | "time" | "procedure" | "via";

const CHECKS: Record<ParamKind, (value: string) => boolean> = {
  uuid: isUuid,
  hex64: (v) => /^[0-9a-f]{64}$/.test(v),
  time: (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/.test(v),
  procedure: (v) => /^[a-z][A-Za-z]{0,40}\.[a-z][A-Za-z]{0,40}$/.test(v),
  via: (v) => v === "token" || v === "mcp",
};

const SEAL: unique symbol = Symbol("statement");

export interface Statement {
  readonly [SEAL]: true;
  readonly name: string;
  /** The text with $1…$n placeholders, for the extended protocol. */
  readonly text: string;
  readonly params: readonly string[];
}

/** Thrown when a value does not have the shape its statement needs (a caller's bug or a forged input). */
export class StatementParamError extends TypeError {
  constructor(statement: string, index: number, kind: ParamKind) {
    super(`${statement}: parameter $${index + 1} is not a valid ${kind}`);
    this.name = "StatementParamError";
  }
}

function statement(name: string, text: string, params: [ParamKind, string][]): Statement {
  params.forEach(([kind, value], i) => {
    if (!CHECKS[kind](value)) throw new StatementParamError(name, i, kind);
  });
  return { [SEAL]: true, name, text, params: params.map(([kind, value]) => (kind === "uuid" ? value.toLowerCase() : value)) };
}

/** The statement with its checked values written in as literals, for the simple protocol. */
export function inline(s: Statement): string {
  return s.text.replace(/\$(\d+)/g, (_, n: string) => `'${s.params[Number(n) - 1]!}'`);
}

/** The store a unit works in: known, or resolved by the database in the opening message. */
export type StoreKey = { id: string } | { tokenHash: string };

/** The expression that set_config receives for a store key (null when it names no store). */
export function storeExpression(key: StoreKey): Statement {
  if ("id" in key) return statement("storeId", "$1::uuid", [["uuid", key.id]]);
  return statement("storeByTokenHash", "privileged.store_id_by_token_hash($1)", [["hex64", key.tokenHash]]);
}

const CURRENT_STORE = "nullif(current_setting('app.store_id', true), '')::uuid";

/** The unit's store and the person's membership in it (none when they are not a member). */
export function membershipOf(userId: string): Statement {
  return statement(
    "membership",
    `select s.id, s.slug, s.name, s.currency, s.mcp_read_customer_details, s.mcp_allow_changes, s.mcp_changes_need_approval,
       m.id as member_id, m.user_id, m.role
     from store s left join member m on m.store_id = s.id and m.user_id = $1
     where s.id = ${CURRENT_STORE}`,
    [["uuid", userId]],
  );
}

const GRANT_COLUMNS = `g.id as grant_id, g.kind as grant_kind, g.areas, g.revoked_at,
  (g.expires_at is not null and g.expires_at <= now()) as expired,
  m.id as member_id, m.user_id, m.role, s.id, s.slug, s.name, s.currency,
  s.mcp_read_customer_details, s.mcp_allow_changes, s.mcp_changes_need_approval`;

const GRANT_FROM = `from api_grant g
  join member m on m.store_id = g.store_id and m.id = g.member_id
  join store s on s.id = g.store_id`;

/** A created token's grant, its member (role read now) and its store, by the SHA-256 of the secret. */
export function grantByTokenHash(tokenHash: string): Statement {
  return statement("grantByTokenHash", `select ${GRANT_COLUMNS} ${GRANT_FROM} where g.secret_hash = $1 and g.kind = 'token'`, [["hex64", tokenHash]]);
}

/** A grant by id (an OAuth connection, or the grant behind an AI approval), with its member and store. */
export function grantById(grantId: string): Statement {
  return statement("grantById", `select ${GRANT_COLUMNS} ${GRANT_FROM} where g.id = $1`, [["uuid", grantId]]);
}

/**
 * Folds one successful read call into its grant's 10-minute activity bucket (an upsert) and marks the
 * grant used, in one statement.
 */
export function foldReadActivity(entry: { grantId: string; procedure: string; via: string; at: Date }): Statement {
  return statement(
    "foldReadActivity",
    `with touched as (
        update api_grant set last_used_at = greatest(coalesce(last_used_at, $4::timestamptz), $4::timestamptz) where id = $1)
      insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start, count, last_at)
      values (${CURRENT_STORE}, $1, $2, 'read', $3, date_bin('10 minutes', $4::timestamptz, '2000-01-01'), 1, $4::timestamptz)
      on conflict (store_id, grant_id, procedure, via, bucket_start) where kind = 'read'
      do update set count = api_activity.count + 1, last_at = greatest(api_activity.last_at, excluded.last_at)`,
    [
      ["uuid", entry.grantId],
      ["procedure", entry.procedure],
      ["via", entry.via],
      ["time", entry.at.toISOString()],
    ],
  );
}

// The menu's links shoppers may see ride with the facts too (migration 0042; shared/storefront/menu.ts): an item
// whose collection or page is not published is left out.
const STOREFRONT_MENU = `coalesce((select jsonb_agg(jsonb_build_object('label', m.label, 'href',
      case m.kind when 'link' then m.url when 'collection' then '/collections/' || c.handle else '/pages/' || p.handle end) order by m.position)
    from menu_item m
    left join collection c on c.store_id = m.store_id and c.id = m.collection_id and c.published
    left join page p on p.store_id = m.store_id and p.id = m.page_id and p.status = 'published'
    where m.store_id = s.id and (m.kind = 'link' or c.id is not null or p.id is not null)), '[]'::jsonb)`;

// The published theme rides with the facts (migration 0041), so every page has the store's look without a read of its own.
const STOREFRONT_FACTS = `select s.id, s.name, s.currency, s.storefront_password_hash as password_hash, coalesce(v.version, 0) as version, t.published as theme,
    ${STOREFRONT_MENU} as menu
  from store s left join storefront_version v on v.store_id = s.id left join store_theme t on t.store_id = s.id
  where s.id = ${CURRENT_STORE}`;

/** What the storefront needs of the unit's store (shared/storefront/hosts.ts `StoreFacts`). */
export function storefrontFacts(): Statement {
  return statement("storefrontFacts", STOREFRONT_FACTS, []);
}

/**
 * The same, only when this transaction changed what the storefront shows (migration 0008's trigger set
 * app.storefront_changed to the store). Sent with COMMIT; when nothing changed it reads no table.
 */
export function storefrontFactsIfChanged(): Statement {
  return statement(
    "storefrontFactsIfChanged",
    `${STOREFRONT_FACTS} and current_setting('app.storefront_changed', true) = current_setting('app.store_id', true)`,
    [],
  );
}

// The same floor's statements on the HTTP path (./openings.ts, ./unit.ts), declared with their rows
// (./statement.ts): the openings of one-round-trip units (migration 0024) and what a change's commit tells.

const EXAMPLE_HASH = "0".repeat(64);
const EXAMPLE_ID = "00000000-0000-4000-8000-000000000001";
const EXAMPLE_CHECK = JSON.stringify({ roles: null, areas: [], memberOnly: false, doorBinds: false, customerDetails: false, mutates: false, slug: null });

/** The caller's check as the opening function takes it: its JSON, or a null check (resolve only). */
const checkOf = (check: string | null) => (check === null ? sql`null::jsonb` : sql`${check}::jsonb`);

const opened = { opened: pg.jsonb<Record<string, unknown>>() };

export const openSessionStatement = declare("db.openSession", {
  row: opened,
  examples: [
    [EXAMPLE_HASH, 1800, 60, EXAMPLE_CHECK],
    [EXAMPLE_HASH, 1800, 60, null],
  ],
  sql: (idHash: string, idleSeconds: number, touchAfterSeconds: number, check: string | null) =>
    sql`select unit.open_session(${idHash}, ${idleSeconds}::int, ${touchAfterSeconds}::int, ${checkOf(check)}) as opened`,
});

export const openMemberStatement = declare("db.openMember", {
  row: opened,
  examples: [[EXAMPLE_ID, EXAMPLE_ID, EXAMPLE_CHECK]],
  sql: (storeId: string, userId: string, check: string | null) => sql`select unit.open_member(${storeId}::uuid, ${userId}::uuid, ${checkOf(check)}) as opened`,
});

export const openTokenStatement = declare("db.openToken", {
  row: opened,
  examples: [[EXAMPLE_HASH, EXAMPLE_CHECK]],
  sql: (tokenHash: string, check: string | null) => sql`select unit.open_token(${tokenHash}, ${checkOf(check)}) as opened`,
});

export const openGrantStatement = declare("db.openGrant", {
  row: opened,
  examples: [[EXAMPLE_ID, EXAMPLE_ID, EXAMPLE_CHECK]],
  sql: (storeId: string, grantId: string, check: string | null) => sql`select unit.open_grant(${storeId}::uuid, ${grantId}::uuid, ${checkOf(check)}) as opened`,
});

export const openStoreStatement = declare("db.openStore", {
  row: opened,
  examples: [[EXAMPLE_ID]],
  sql: (storeId: string) => sql`select jsonb_build_object('id', set_config('app.store_id', ${storeId}, true)) as opened`,
});

/** The unit's store, as its commit tells the relay (null when the unit set none). */
export const unitStore = declare("db.unitStore", {
  row: { store_id: orNull(pg.text()) },
  examples: [[]],
  sql: () => sql`select current_setting('app.store_id', true) as store_id`,
});

/** storefrontFactsIfChanged on the HTTP path: the same text, which takes no parameters. */
export const storefrontFactsIfChangedStatement = declare("db.storefrontFactsIfChanged", {
  row: { id: store.id, name: store.name, currency: store.currency, password_hash: store.storefrontPasswordHash, version: pg.int8(), theme: orNull(storeTheme.published), menu: pg.jsonb<unknown>() },
  examples: [[]],
  sql: (): SQL => {
    const facts = storefrontFactsIfChanged();
    if (facts.params.length) throw new Error("storefrontFactsIfChanged takes no parameters");
    return sql.raw(facts.text);
  },
});

// The guards of a change sent as one unit (./changes.ts, migration 0025): each answers whether it held.

const guarded = { ok: pg.bool() };
const EXAMPLE_CONDITION = sql`true`;

export const ensureStatement = declare("db.ensure", {
  row: guarded,
  examples: [[EXAMPLE_CONDITION, "409", "Taken.", "{}"]],
  sql: (condition: SQL, status: string, message: string, data: string | null) => sql`select unit.ensure(${condition}, ${status}, ${message}, ${data}::jsonb) as ok`,
});

export const ensureSqlStatement = declare("db.ensureSql", {
  row: guarded,
  examples: [[EXAMPLE_CONDITION, "409", sql`'Taken.'`, sql`'{}'::jsonb`]],
  sql: (condition: SQL, status: string, message: SQL, data: SQL) => sql`select unit.ensure(${condition}, ${status}, ${message}, ${data}) as ok`,
});

export const ensureChangedStatement = declare("db.ensureChanged", {
  row: guarded,
  examples: [[sql`update store set name = name where false returning 1`, "409", "Taken.", null]],
  sql: (change: SQL, status: string, message: string, data: string | null) =>
    sql`with changed as (${change})
        select unit.ensure(exists (select 1 from changed), ${status}, ${message}, ${data}::jsonb) as ok`,
});

export const unchangedStatement = declare("db.unchanged", {
  row: guarded,
  examples: [[EXAMPLE_CONDITION]],
  sql: (condition: SQL) => sql`select unit.unchanged(${condition}) as ok`,
});

/** An outbox event written only when `when` holds (./changes.ts `emitStep`). */
export const emitWhenStatement = declare("db.emitWhen", {
  row: { id: outboxEvent.id },
  examples: [["test.example", sql`'{}'::jsonb`, sql`now()`, EXAMPLE_CONDITION]],
  sql: (kind: string, payload: SQLWrapper, at: Date | SQL, when: SQL) =>
    sql`insert into outbox_event (store_id, kind, payload, available_at) select ${UNIT_STORE}, ${kind}, ${payload}, ${at} where ${when} returning id`,
});

/** The health check's `select 1` (./ping.ts). */
export const pingStatement = declare("db.ping", {
  row: { one: pg.int4() },
  examples: [[]],
  sql: () => sql`select 1 as one`,
});
