import { EXAMPLE, statement } from "../db/statement";
import { sql } from "../db/steps";

/** The pipeline's statements in SQL (decision 0026): an API door's change logged in the change's own transaction or unit (./activity.ts, ./write.ts). */

const { id: ID } = EXAMPLE;

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
