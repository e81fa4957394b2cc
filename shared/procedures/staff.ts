import { and, asc, eq, isNull, sql } from "drizzle-orm";
import { z } from "zod";
import { ROLE_LABELS, sortedPermissions } from "../auth/permissions";
import { randomSecret, sha256Hex } from "../auth/tokens";
import { emit } from "../db/outbox";
import { member, ROLES, session, staffInvitation, userAccount } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import { AppError } from "../http/errors";
import { plan } from "../db/plan";
import { storeProcedure } from "./define";

export const INVITATION_DAYS = 7;

const memberNotFound = () => new AppError("NOT_FOUND", "Member not found in this store.");
const lastOwner = () =>
  new AppError("CONFLICT", "The last Owner cannot be removed or demoted. Make another member Owner first.", { reason: "last_owner" });

/** Locks the store's Owner rows and the target, so two concurrent demotions cannot both pass the check. */
async function ownersLocked(tx: StoreTx): Promise<string[]> {
  const rows = await tx
    .select({ id: member.id })
    .from(member)
    .where(and(eq(member.storeId, tx.storeId), eq(member.role, "owner")))
    .orderBy(asc(member.id))
    .for("update");
  return rows.map((r) => r.id);
}

async function targetLocked(tx: StoreTx, memberId: string) {
  const [row] = await tx
    .select({ id: member.id, userId: member.userId, role: member.role })
    .from(member)
    .where(and(eq(member.storeId, tx.storeId), eq(member.id, memberId)))
    .for("update");
  if (!row) throw memberNotFound();
  return row;
}

export const me = storeProcedure({
  router: "staff",
  name: "me",
  description: "Who you are in this store: your member record, role, permissions and the store.",
  access: "none",
  mutates: false,
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
  input: z.strictObject({ email: z.email().max(320), role: z.enum(ROLES) }),
  async run({ tx, member: inviter }, input) {
    const email = input.email.trim();
    const [existing] = await tx
      .select({ id: member.id })
      .from(member)
      .innerJoin(userAccount, eq(userAccount.id, member.userId))
      .where(and(eq(member.storeId, tx.storeId), sql`lower(${userAccount.email}) = lower(${email})`));
    if (existing) {
      throw new AppError("CONFLICT", "This person is already a member of the store.", { issues: [{ path: "email", message: "already a member" }] });
    }
    await tx
      .update(staffInvitation)
      .set({ revokedAt: sql`now()` })
      .where(
        and(
          eq(staffInvitation.storeId, tx.storeId),
          sql`lower(${staffInvitation.email}) = lower(${email})`,
          isNull(staffInvitation.acceptedAt),
          isNull(staffInvitation.revokedAt),
        ),
      );
    const token = randomSecret(32);
    const [invitation] = await tx
      .insert(staffInvitation)
      .values({
        storeId: tx.storeId,
        email,
        role: input.role,
        tokenHash: await sha256Hex(token),
        invitedBy: inviter.id,
        expiresAt: new Date(Date.now() + INVITATION_DAYS * 86_400_000),
      })
      .returning({ id: staffInvitation.id, email: staffInvitation.email, role: staffInvitation.role, expiresAt: staffInvitation.expiresAt });
    await emit(tx, "staff.invited", { invitationId: invitation!.id, role: input.role });
    // The plain token exists only in this answer; the database keeps its SHA-256 hash.
    return { invitation: invitation!, acceptPath: `/invite/${token}` };
  },
});

export const setStaffRole = storeProcedure({
  router: "staff",
  name: "setRole",
  description: "Change a member's role. The last Owner cannot be demoted.",
  access: "staff.write",
  mutates: true,
  input: z.strictObject({ memberId: z.uuid(), role: z.enum(ROLES) }),
  async run({ tx }, input) {
    const owners = await ownersLocked(tx);
    const target = await targetLocked(tx, input.memberId);
    if (target.role === input.role) return { id: target.id, role: target.role };
    if (target.role === "owner" && owners.length <= 1) throw lastOwner();
    await tx
      .update(member)
      .set({ role: input.role, updatedAt: sql`now()` })
      .where(and(eq(member.storeId, tx.storeId), eq(member.id, target.id)));
    await emit(tx, "staff.role_changed", { memberId: target.id, from: target.role, to: input.role });
    return { id: target.id, role: input.role };
  },
});

export const removeStaff = storeProcedure({
  router: "staff",
  name: "remove",
  description: "Remove a member from the store; their sessions lose it at once. The last Owner cannot be removed.",
  access: "staff.write",
  mutates: true,
  input: z.strictObject({ memberId: z.uuid() }),
  async run({ tx }, input) {
    const owners = await ownersLocked(tx);
    const target = await targetLocked(tx, input.memberId);
    if (target.role === "owner" && owners.length <= 1) throw lastOwner();
    await tx.delete(member).where(and(eq(member.storeId, tx.storeId), eq(member.id, target.id)));
    // Sessions are not store-scoped rows; drop this store from the removed person's sessions.
    await tx
      .update(session)
      .set({ activeStoreId: null })
      .where(and(eq(session.userId, target.userId), eq(session.activeStoreId, tx.storeId)));
    await emit(tx, "staff.removed", { memberId: target.id });
    return { id: target.id, removed: true };
  },
});

export const revokeInvitation = storeProcedure({
  router: "staff",
  name: "revokeInvitation",
  description: "Withdraw an open invitation; its link stops working at once.",
  access: "staff.write",
  mutates: true,
  input: z.strictObject({ invitationId: z.uuid() }),
  async run({ tx }, input) {
    const [row] = await tx
      .update(staffInvitation)
      .set({ revokedAt: sql`now()` })
      .where(
        and(
          eq(staffInvitation.storeId, tx.storeId),
          eq(staffInvitation.id, input.invitationId),
          isNull(staffInvitation.acceptedAt),
          isNull(staffInvitation.revokedAt),
        ),
      )
      .returning({ id: staffInvitation.id });
    if (!row) throw new AppError("NOT_FOUND", "No open invitation with this id.");
    await emit(tx, "staff.invitation_revoked", { invitationId: row.id });
    return { id: row.id, revoked: true };
  },
});

export const staffProcedures = [me, listStaff, inviteStaff, setStaffRole, removeStaff, revokeInvitation];
