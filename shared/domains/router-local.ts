/**
 * The local router `npm run dev` and the tests use: custom hostnames kept in the HOSTS KV namespace
 * (`local-router:<hostname>`, `local-router-id:<id>`), refusing a duplicate and an unknown id as Cloudflare
 * does, with failures on demand (LOCAL_ROUTER_BEHAVIOUR). Locally there is no edge in front of the
 * storefront, so a hostname is `active` at once unless the behaviour says otherwise.
 */
import { z } from "zod";
import { parseJsonVariable } from "#shared/core/env";
import type { LocalKv } from "./local-kv";
import { RouterError, type CustomHostname, type DomainRouter, type RouterErrorKind } from "./router";

const errorKind = z.enum(["unavailable", "timeout", "rate_limited", "auth", "bad_request"]);

/** Failures on demand (the LOCAL_ROUTER_BEHAVIOUR variable, as JSON). */
export const localRouterBehaviour = z.strictObject({
  failFind: errorKind.optional(),
  failCreate: errorKind.optional(),
  failRemove: errorKind.optional(),
  /** What a new hostname's status is; default `active`. */
  status: z.enum(["pending", "active"]).optional(),
});
export type LocalRouterBehaviour = z.infer<typeof localRouterBehaviour>;

export function parseLocalRouterBehaviour(json: string | undefined): LocalRouterBehaviour {
  return parseJsonVariable("LOCAL_ROUTER_BEHAVIOUR", json, localRouterBehaviour);
}

const stored = z.object({
  id: z.string(),
  hostname: z.string(),
  status: z.string(),
  sslStatus: z.string().nullable(),
  verificationErrors: z.array(z.string()),
});

const byHostname = (hostname: string) => `local-router:${hostname}`;
const byId = (id: string) => `local-router-id:${id}`;

export function localRouter(kv: LocalKv, behaviour: LocalRouterBehaviour = {}): DomainRouter {
  const fail = (kind: RouterErrorKind, what: string) => new RouterError("local", kind, `the local router was told to fail ${what} (${kind})`);
  const read = async (hostname: string): Promise<CustomHostname | null> => {
    const parsed = stored.safeParse(await kv.get(byHostname(hostname), "json"));
    return parsed.success ? parsed.data : null;
  };
  return {
    provider: "local",

    async find(hostname) {
      if (behaviour.failFind) throw fail(behaviour.failFind, "lookups");
      return read(hostname);
    },

    async create(hostname) {
      if (behaviour.failCreate) throw fail(behaviour.failCreate, "creates");
      if (await read(hostname)) throw new RouterError("local", "conflict", `the local router already has ${hostname}`, { status: 409 });
      const status = behaviour.status ?? "active";
      const made: CustomHostname = {
        id: crypto.randomUUID().replace(/-/g, ""),
        hostname,
        status,
        sslStatus: status === "active" ? "active" : "pending_validation",
        verificationErrors: status === "active" ? [] : ["custom hostname does not CNAME to this zone."],
      };
      await kv.put(byHostname(hostname), JSON.stringify(made));
      await kv.put(byId(made.id), JSON.stringify(hostname));
      return made;
    },

    async remove(id) {
      if (behaviour.failRemove) throw fail(behaviour.failRemove, "deletes");
      const hostname = await kv.get(byId(id), "json");
      if (typeof hostname !== "string") throw new RouterError("local", "not_found", `the local router has no custom hostname ${id}`, { status: 404 });
      await kv.delete(byHostname(hostname));
      await kv.delete(byId(id));
    },
  };
}
