import { and, asc, eq, isNull, sql, type SQL } from "drizzle-orm";
import { z } from "zod";
import { PERMISSIONS, ROLE_LABELS, sortedPermissions } from "../auth/permissions";
import { randomSecret, sha256Hex } from "../core/tokens";
import { emitStep, ensure } from "../db/changes";
import { aiApproval, member, ROLES, session, staffInvitation, userAccount } from "../db/schema";
import { AppError } from "../core/errors";
import { constant, plan } from "../db/plan";
import type { Q } from "../db/steps";
import { storeProcedure } from "./define";
import * as out from "./outputs";

export const INVITATION_DAYS = 7;

const memberNotFound = () => new AppError("NOT_FOUND", "Member not found in this store.");
const lastOwner = () =>
  new AppError("CONFLICT", "The last Owner cannot be removed or demoted. Make another member Owner first.", { reason: "last_owner" });

/** Locks the store's Owner rows (in id order), so two concurrent demotions or removals cannot both pass the check. */
const ownersLocked = (q: Q, store: SQL) =>
  q.select({ id: member.id }).from(member).where(and(eq(member.storeId, store), eq(member.role, "owner"))).orderBy(asc(member.id)).for("update");

const ofMember = (store: SQL, memberId: string) => and(eq(member.storeId, store), eq(member.id, memberId));

/** The member exists in the store; locked for the rest of the change. */
const targetLocked = (q: Q, store: SQL, memberId: string) => ensure(q, sql`exists (select 1 from ${member} where ${ofMember(store, memberId)} for update)`, memberNotFound());

/** Refuses to leave the store without an Owner when `leaves` (SQL over the target's row) holds; the Owners are locked first. */
const keepsAnOwner = (q: Q, store: SQL, memberId: string, leaves: SQL) =>
  ensure(
    q,
    sql`not exists (select 1 from ${member} where ${ofMember(store, memberId)} and ${member.role} = 'owner' and ${leaves})
        or (select count(*) from ${member} where ${member.storeId} = ${store} and ${member.role} = 'owner') > 1`,
    lastOwner(),
  );

/** A new invitation's secret, made before the unit: the database keeps only its SHA-256. */
async function invitationSecret(): Promise<{ token: string; hash: string }> {
  const token = randomSecret(32);
  return { token, hash: await sha256Hex(token) };
}

const invitationOutput = z.object({ id: out.id, email: z.string(), role: z.enum(ROLES), expiresAt: out.instant });

export const me = storeProcedure({
  router: "staff",
  name: "me",
  description: "Who you are in this store: your member record, role, permissions and the store.",
  access: "none",
  mutates: false,
  output: z.object({ store: z.object({ id: out.id, slug: z.string(), name: z.string(), currency: z.string() }), member: z.object({ id: out.id, role: z.enum(ROLES), roleLabel: z.string() }), user: z.object({ id: out.id, email: z.string(), name: z.string().nullable() }).nullable(), permissions: z.array(z.enum(PERMISSIONS)) }),
  input: z.strictObject({}),
  read: (q, scope) =>
    plan([q.select({ id: userAccount.id, email: userAccount.email, name: userAccount.name }).from(userAccount).where(eq(userAccount.id, scope.userId))] as const, ([[user]]) => {
      const { store, member: m, permissions } = scope.caller();
      return {
        store: { id: store.id, slug: store.slug, name: store.name, currency: store.currency },
        member: { id: m.id, role: m.role, roleLabel: ROLE_LABELS[m.role] },
        user: user ?? null,
        permissions: sortedPermissions(permissions),
      };
    }),
});

export const listStaff = storeProcedure({
  router: "staff",
  name: "list",
  description: "The store's members with their roles, and the invitations still open.",
  access: "staff.read",
  mutates: false,
  output: z.object({ members: z.array(z.object({ id: out.id, role: z.enum(ROLES), email: z.string(), name: z.string().nullable(), joinedAt: out.instant })), invitations: z.array(invitationOutput) }),
  input: z.strictObject({}),
  read: (q, { store }) =>
    plan(
      [
        q
          .select({ id: member.id, role: member.role, email: userAccount.email, name: userAccount.name, joinedAt: member.createdAt })
          .from(member)
          .innerJoin(userAccount, eq(userAccount.id, member.userId))
          .where(eq(member.storeId, store))
          .orderBy(asc(member.createdAt), asc(member.id)),
        q
          .select({ id: staffInvitation.id, email: staffInvitation.email, role: staffInvitation.role, expiresAt: staffInvitation.expiresAt })
          .from(staffInvitation)
          .where(
            and(
              eq(staffInvitation.storeId, store),
              isNull(staffInvitation.acceptedAt),
              isNull(staffInvitation.revokedAt),
              sql`${staffInvitation.expiresAt} > now()`,
            ),
          )
          .orderBy(asc(staffInvitation.createdAt)),
      ] as const,
      ([members, invitations]) => ({ members, invitations }),
    ),
});

export const inviteStaff = storeProcedure({
  router: "staff",
  name: "invite",
  description:
    "Invite a person by email with a role. Answers the invitation link once (valid 7 days); share it with them. A new invitation to the same email replaces the open one.",
  access: "staff.write",
  mutates: true,
  output: z.object({ invitation: invitationOutput, acceptPath: z.string() }),
  input: z.strictObject({ email: z.email().max(320), role: z.enum(ROLES) }),
  write: {
    // The token is made before the unit (no statement: no trip); the pipeline awaits what `prepare` answers.
    prepare: () => constant(invitationSecret()),
    apply(q, { store, memberId }, input, secret: { token: string; hash: string }) {
      const email = input.email.trim();
      const id = crypto.randomUUID();
      return plan(
        [
          ensure(
            q,
            sql`not exists (select 1 from ${member} join ${userAccount} on ${userAccount.id} = ${member.userId}
                            where ${member.storeId} = ${store} and lower(${userAccount.email}) = lower(${email}))`,
            new AppError("CONFLICT", "This person is already a member of the store.", { issues: [{ path: "email", message: "already a member" }] }),
          ),
          q
            .update(staffInvitation)
            .set({ revokedAt: sql`now()` })
            .where(
              and(
                eq(staffInvitation.storeId, store),
                sql`lower(${staffInvitation.email}) = lower(${email})`,
                isNull(staffInvitation.acceptedAt),
                isNull(staffInvitation.revokedAt),
              ),
            ),
          q
            .insert(staffInvitation)
            .values({
              id,
              storeId: store,
              email,
              role: input.role,
              tokenHash: secret.hash,
              invitedBy: memberId,
              expiresAt: sql`now() + make_interval(days => ${INVITATION_DAYS})`,
            })
            .returning({ id: staffInvitation.id, email: staffInvitation.email, role: staffInvitation.role, expiresAt: staffInvitation.expiresAt }),
          emitStep(q, "staff.invited", { invitationId: id, role: input.role }),
        ] as const,
        // The plain token exists only in this answer; the database keeps its SHA-256 hash.
        ([, , [invitation]]) => ({ invitation: invitation!, acceptPath: `/invite/${secret.token}` }),
      );
    },
  },
});

export const setStaffRole = storeProcedure({
  router: "staff",
  name: "setRole",
  description: "Change a member's role. The last Owner cannot be demoted.",
  access: "staff.write",
  mutates: true,
  output: z.object({ id: out.id, role: z.enum(ROLES) }),
  input: z.strictObject({ memberId: z.uuid(), role: z.enum(ROLES) }),
  write: {
    apply(q, { store }, input) {
      const target = ofMember(store, input.memberId);
      const changes = sql`${member.role} <> ${input.role}`;
      return plan(
        [
          ownersLocked(q, store),
          targetLocked(q, store, input.memberId),
          keepsAnOwner(q, store, input.memberId, changes),
          // Only when the role changes, written before the row does (the event names the role it had).
          emitStep(
            q,
            "staff.role_changed",
            sql`(select jsonb_build_object('memberId', ${member.id}, 'from', ${member.role}, 'to', ${input.role}::text) from ${member} where ${target})`,
            { when: sql`exists (select 1 from ${member} where ${target} and ${changes})` },
          ),
          q.update(member).set({ role: input.role, updatedAt: sql`now()` }).where(and(target, changes)),
        ] as const,
        () => ({ id: input.memberId.toLowerCase(), role: input.role }),
      );
    },
  },
});

export const removeStaff = storeProcedure({
  router: "staff",
  name: "remove",
  description: "Remove a member from the store; their sessions lose it at once, their API grants end and their pending AI proposals expire. The last Owner cannot be removed.",
  access: "staff.write",
  mutates: true,
  output: z.object({ id: out.id, removed: z.boolean() }),
  input: z.strictObject({ memberId: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const target = ofMember(store, input.memberId);
      return plan(
        [
          ownersLocked(q, store),
          targetLocked(q, store, input.memberId),
          keepsAnOwner(q, store, input.memberId, sql`true`),
          // Sessions are not store-scoped rows; drop this store from the removed person's sessions.
          q
            .update(session)
            .set({ activeStoreId: null })
            .where(and(sql`${session.userId} = (select ${member.userId} from ${member} where ${target})`, eq(session.activeStoreId, store))),
          // Their pending AI proposals wait for them alone: they expire now (kept, without the grant, as history).
          q
            .update(aiApproval)
            .set({ expiresAt: sql`least(${aiApproval.expiresAt}, now())` })
            .where(and(eq(aiApproval.storeId, store), eq(aiApproval.memberId, input.memberId), eq(aiApproval.status, "pending"))),
          q.delete(member).where(target),
          emitStep(q, "staff.removed", { memberId: input.memberId.toLowerCase() }),
        ] as const,
        () => ({ id: input.memberId.toLowerCase(), removed: true }),
      );
    },
  },
});

export const revokeInvitation = storeProcedure({
  router: "staff",
  name: "revokeInvitation",
  description: "Withdraw an open invitation; its link stops working at once.",
  access: "staff.write",
  mutates: true,
  output: z.object({ id: out.id, revoked: z.boolean() }),
  input: z.strictObject({ invitationId: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const open = and(
        eq(staffInvitation.storeId, store),
        eq(staffInvitation.id, input.invitationId),
        isNull(staffInvitation.acceptedAt),
        isNull(staffInvitation.revokedAt),
      );
      const id = input.invitationId.toLowerCase();
      return plan(
        [
          ensure(q, sql`exists (select 1 from ${staffInvitation} where ${open} for update)`, new AppError("NOT_FOUND", "No open invitation with this id.")),
          q.update(staffInvitation).set({ revokedAt: sql`now()` }).where(open),
          emitStep(q, "staff.invitation_revoked", { invitationId: id }),
        ] as const,
        () => ({ id, revoked: true }),
      );
    },
  },
});

export const staffProcedures = [me, listStaff, inviteStaff, setStaffRole, removeStaff, revokeInvitation];
