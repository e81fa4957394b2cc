import { sha256Hex } from "../core/tokens";
import type { Database } from "../db/database";
import { storefrontFacts } from "../db/statements";
import { storeOpeningStatement } from "../db/openings";
import { sentOf } from "../db/statement";
import { openByHostname } from "./statements";
import { errorFields, type Logger } from "../core/log";
import { writeStoreFacts, type HostsKv, type StoreFacts } from "./hosts";
import { readTheme } from "./theme";
import { readMenu } from "./menu";

/**
 * The storefront password's cookie (SPEC "Storefront behaviour" 3): its value is derived from the store id
 * and the password's hash, so changing the password (or turning it off and on) signs every shopper out, and
 * a cookie of one store never opens another.
 */
export function passwordCookieValue(storeId: string, passwordHash: string): Promise<string> {
  return sha256Hex(`storefront-password:${storeId}:${passwordHash}`);
}

/** A row of the `storefrontFacts` statement as the HOSTS namespace holds it (the password only as a cookie hash). */
export async function factsFromRow(row: Record<string, unknown>): Promise<StoreFacts> {
  const id = String(row["id"]);
  const hash = row["password_hash"];
  return {
    id,
    name: String(row["name"]),
    currency: String(row["currency"]),
    passwordCookieHash: typeof hash === "string" ? await sha256Hex(await passwordCookieValue(id, hash)) : null,
    version: Number(row["version"]),
    theme: readTheme(row["theme"]),
    menu: readMenu(row["menu"]) ?? [],
  };
}

/** Reads a store's facts: one read-only unit over the HTTP path, one round trip. */
export async function loadStoreFacts(db: Database, storeId: string): Promise<StoreFacts | null> {
  const facts = storefrontFacts();
  const [, rows] = await db.sendHttp([storeOpeningStatement(storeId), { sql: facts.text, params: [...facts.params], method: "execute" }], { readOnly: true });
  const row = rows?.[0] as Record<string, unknown> | undefined;
  return row ? factsFromRow(row) : null;
}

/**
 * A hostname's store and that store's facts in one round trip (the gate's two held entries missed
 * together: the host's entry refreshes once a minute, and its store's facts with it).
 */
export async function loadHostAndFacts(db: Database, hostname: string): Promise<{ storeId: string | null; facts: StoreFacts | null }> {
  const facts = storefrontFacts();
  const [opened, rows] = await db.sendHttp(
    [
      sentOf(openByHostname, hostname),
      { sql: facts.text, params: [...facts.params], method: "execute" },
    ],
    { readOnly: true },
  );
  const storeId = ((opened?.[0] as { store_id?: string | null } | undefined)?.store_id ?? null) || null;
  const row = rows?.[0] as Record<string, unknown> | undefined;
  return { storeId, facts: storeId && row ? await factsFromRow(row) : null };
}

/**
 * The `onStorefrontChange` hook of a runtime's databases: when the runtime binds the HOSTS namespace, a
 * commit that changed a store's storefront overwrites the store's facts there at once. A failed write is
 * logged and never fails the committed request: the facts' 60 s hold bounds how long it can matter.
 */
export function pushStoreFactsTo(env: object, log: Logger): ((row: Record<string, unknown>) => Promise<void>) | undefined {
  const kv = (env as { HOSTS?: HostsKv }).HOSTS;
  if (!kv) return undefined;
  return async (row) => {
    try {
      const facts = await factsFromRow(row);
      await writeStoreFacts(kv, facts);
      log.debug("storefront.facts_pushed", { storeId: facts.id, version: facts.version });
    } catch (e) {
      log.warn("storefront.facts_push_failed", { storeId: String(row["id"]), ...errorFields(e) });
    }
  };
}
