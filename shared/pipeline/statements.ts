import { idempotencyKey } from "../db/schema";
import { EXAMPLE, orNull, pg, statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/** The pipeline's statements in SQL (decision 0026): an API door's change logged in the change's own transaction or unit (./activity.ts, ./write.ts). */

const { id: ID, hash: HASH } = EXAMPLE;

/** One activity row for a change call, and its grant marked used (the grant named by the caller). */
export const logWrite = statement("pipeline.logWrite", {
  row: {},
  examples: [[ID, ID, "products.update", "token"]],
  sql: (storeId: string, grantId: string, procedure: string, via: string) =>
    sql`with touched as (update api_grant set last_used_at = now() where store_id = ${storeId} and id = ${grantId})
     insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start) values (${storeId}, ${grantId}, ${procedure}, 'write', ${via}, now())`,
});

/** The same in a unit, the grant from its opening (app.grant_id): no trip of its own. */
export const logUnitWrite = statement("pipeline.logUnitWrite", {
  row: {},
  examples: [["products.update", "mcp"]],
  sql: (procedure: string, door: string) =>
    sql`with grant_id as (select nullif(current_setting('app.grant_id', true), '')::uuid as id),
        touched as (update api_grant set last_used_at = now() where store_id = nullif(current_setting('app.store_id', true), '')::uuid and id = (select id from grant_id))
      insert into api_activity (store_id, grant_id, procedure, kind, via, bucket_start)
      select nullif(current_setting('app.store_id', true), '')::uuid, id, ${procedure}, 'write', ${door}, now() from grant_id`,
});

/** Whose keys a unit's caller uses: its grant's (a token, an OAuth connection) or its person's (a session); ./idempotency-key.ts ownerOf. */
const OWNER = sql`case when coalesce(current_setting('app.grant_id', true), '') <> '' then 'grant:' || current_setting('app.grant_id', true)
  else 'member:' || current_setting('app.user_id', true) end`;

/** The caller's Idempotency-Key in the unit's store, with its answer once stored (./idempotency-key.ts); `owner` always comes back. */
export const readIdempotencyKey = statement("pipeline.readIdempotencyKey", {
  row: {
    owner: pg.text(),
    procedure: orNull(idempotencyKey.procedure),
    request_hash: orNull(idempotencyKey.requestHash),
    status: orNull(idempotencyKey.status),
    response: orNull(idempotencyKey.response),
    created_at: orNull(idempotencyKey.createdAt),
  },
  examples: [["k-1"]],
  sql: (key: string) =>
    sql`with me as (select ${OWNER} as owner)
     select me.owner, k.procedure, k.request_hash, k.status, k.response, k.created_at
     from me left join idempotency_key k
       on k.store_id = ${CURRENT_STORE} and k.owner = me.owner and k.key = ${key} and k.created_at > now() - interval '24 hours'`,
});

/**
 * A committed change's answer, stored under its key. A procedure whose own units take no key (an approval's
 * decision) has its row made here, unless another request took the key meanwhile.
 */
export const storeIdempotentAnswer = statement("pipeline.storeIdempotentAnswer", {
  row: {},
  examples: [[{ owner: "grant:" + ID, key: "k-1", procedure: "products.create", hash: HASH, status: 200, response: '{"json":1}' }]],
  sql: (a: { owner: string; key: string; procedure: string; hash: string; status: number; response: string }) =>
    sql`insert into idempotency_key (store_id, owner, key, procedure, request_hash, status, response)
     values (${CURRENT_STORE}, ${a.owner}, ${a.key}, ${a.procedure}, ${a.hash}, ${a.status}, ${a.response})
     on conflict (store_id, owner, key) do update set status = excluded.status, response = excluded.response
     where idempotency_key.response is null and idempotency_key.request_hash = excluded.request_hash`,
});
