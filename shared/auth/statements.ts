import { session, userAccount } from "../db/schema";
import { EXAMPLE, statement } from "../db/statement";
import { sql } from "../db/steps";

/** Admin sessions' statements in SQL (decision 0026), on the people's own tables outside any store (workers/admin/auth/session.ts). */

const { id: ID, hash: HASH } = EXAMPLE;

/** The valid session with this id hash and its person; its last use refreshed when older than `touchAfterSeconds`. */
export const findSession = statement("auth.findSession", {
  row: { id_hash: session.idHash, user_id: session.userId, active_store_id: session.activeStoreId, email: userAccount.email, name: userAccount.name },
  examples: [[HASH, 86_400, 300]],
  sql: (idHash: string, idleSeconds: number, touchAfterSeconds: number) =>
    sql`with s as (
       select id_hash, user_id, active_store_id, last_seen_at from session
       where id_hash = ${idHash} and expires_at > now() and last_seen_at > now() - make_interval(secs => ${idleSeconds})
     ), touched as (
       update session set last_seen_at = now()
       where id_hash = (select id_hash from s) and last_seen_at < now() - make_interval(secs => ${touchAfterSeconds})
     )
     select s.id_hash, s.user_id, s.active_store_id, u.email, u.name
     from s join user_account u on u.id = s.user_id`,
});

/** A session marked used now, when its last use is older than `touchAfterSeconds`. */
export const touchSession = statement("auth.touchSession", {
  row: {},
  examples: [[HASH, 300]],
  sql: (idHash: string, touchAfterSeconds: number) =>
    sql`update session set last_seen_at = now() where id_hash = ${idHash} and last_seen_at < now() - make_interval(secs => ${touchAfterSeconds})`,
});

export interface NewSession {
  idHash: string;
  userId: string;
  activeStoreId: string | null;
  userAgent: string | null;
  ip: string | null;
  idleSeconds: number;
  lifetimeSeconds: number;
}

/** A session started, that person's dead sessions cleared on the way. */
export const startSession = statement("auth.startSession", {
  row: {},
  examples: [[{ idHash: HASH, userId: ID, activeStoreId: null, userAgent: null, ip: null, idleSeconds: 86_400, lifetimeSeconds: 1_209_600 }]],
  sql: (s: NewSession) =>
    sql`with gone as (
       delete from session where user_id = ${s.userId} and (expires_at <= now() or last_seen_at <= now() - make_interval(secs => ${s.idleSeconds}))
     )
     insert into session (id_hash, user_id, active_store_id, expires_at, user_agent, ip)
     values (${s.idHash}, ${s.userId}, ${s.activeStoreId}, now() + make_interval(secs => ${s.lifetimeSeconds}), ${s.userAgent}, ${s.ip})`,
});
