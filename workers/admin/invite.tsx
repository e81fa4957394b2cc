import { and, eq, isNull, sql } from "drizzle-orm";
import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { hashPassword } from "#shared/auth/password";
import { ROLE_LABELS } from "#shared/auth/permissions";
import { sha256Hex } from "#shared/core/tokens";
import type { Database } from "#shared/db/database";
import { emit } from "#shared/db/outbox";
import { storeIdByInvitation } from "#shared/db/privileged";
import { member, session, staffInvitation, store, userAccount } from "#shared/db/schema";
import { withStore } from "#shared/db/with-store";
import { AppError } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import { createSession, setSessionCookie } from "./auth/session";
import { csrfOf, currentSession, type AdminContext, type AdminEnv } from "./context";
import { sessionForm } from "./session-form";
import { PlainPage } from "./pages/layout";

/**
 * Accepting a staff invitation (`staff.invite` answers the link once). A signed-in person whose email
 * matches joins with one click; someone without an account sets a name and password here; someone
 * with an account signs in first and comes back.
 */
export const invite = new Hono<AdminEnv>();

const invalidLink = () =>
  new AppError("NOT_FOUND", "This invitation link is not valid any more (used, withdrawn or expired). Ask the store's Owner for a new one.");

interface Invitation {
  id: string;
  storeId: string;
  storeName: string;
  email: string;
  role: "owner" | "admin" | "staff";
}

async function openInvitation(db: Database, token: string): Promise<Invitation> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(token)) throw invalidLink();
  const tokenHash = await sha256Hex(token);
  const storeId = await storeIdByInvitation(db, tokenHash);
  if (!storeId) throw invalidLink();
  const row = await withStore(
    db,
    storeId,
    async (tx) =>
      (
        await tx
          .select({ id: staffInvitation.id, email: staffInvitation.email, role: staffInvitation.role, storeName: store.name })
          .from(staffInvitation)
          .innerJoin(store, eq(store.id, staffInvitation.storeId))
          .where(and(eq(staffInvitation.storeId, storeId), eq(staffInvitation.tokenHash, tokenHash)))
      )[0],
    { readOnly: true },
  );
  if (!row) throw invalidLink();
  return { ...row, storeId };
}

const InvitePage: FC<{ inv: Invitation; token: string; mode: "join" | "create" | "signin" | "other"; csrf?: string; signedInAs?: string; message?: string }> = (p) => (
  <PlainPage title={`Join ${p.inv.storeName}`}>
    <div class="card">
      <h1>Join {p.inv.storeName}</h1>
      <p>
        You are invited as <strong>{ROLE_LABELS[p.inv.role]}</strong> ({p.inv.email}).
      </p>
      {p.message ? (
        <p class="alert" role="alert">
          {p.message}
        </p>
      ) : null}
      {p.mode === "join" ? (
        <form method="post" action={`/invite/${p.token}`}>
          <input type="hidden" name="csrf" value={p.csrf ?? ""} />
          <button type="submit">Join {p.inv.storeName}</button>
        </form>
      ) : p.mode === "signin" ? (
        <p>
          <a href={`/login?next=${encodeURIComponent(`/invite/${p.token}`)}`}>Sign in as {p.inv.email}</a> to accept.
        </p>
      ) : p.mode === "other" ? (
        <p>You are signed in as {p.signedInAs}. Sign out, then open this link again to accept as {p.inv.email}.</p>
      ) : (
        <form method="post" action={`/invite/${p.token}`}>
          <label for="name">Your name</label>
          <input id="name" name="name" required maxlength={120} autocomplete="name" />
          <label for="password">Choose a password (10 characters or more)</label>
          <input id="password" name="password" type="password" required minlength={10} maxlength={1024} autocomplete="new-password" />
          <button type="submit">Create account and join</button>
        </form>
      )}
    </div>
  </PlainPage>
);

async function accountExists(db: Database, email: string): Promise<boolean> {
  const rows = await db.orm.select({ id: userAccount.id }).from(userAccount).where(sql`lower(${userAccount.email}) = lower(${email})`).limit(1);
  return rows.length > 0;
}

async function render(c: AdminContext, inv: Invitation, token: string, message?: string, status: 200 | 400 = 200) {
  c.header("cache-control", "no-store");
  c.header("referrer-policy", "no-referrer"); // the URL carries the invitation token
  const signedIn = await currentSession(c);
  if (signedIn) {
    const same = signedIn.info.email.toLowerCase() === inv.email.toLowerCase();
    return c.html(
      <InvitePage inv={inv} token={token} mode={same ? "join" : "other"} csrf={await csrfOf(signedIn)} signedInAs={signedIn.info.email} message={message} />,
      status,
    );
  }
  const mode = (await accountExists(c.var.db, inv.email)) ? "signin" : "create";
  return c.html(<InvitePage inv={inv} token={token} mode={mode} message={message} />, status);
}

invite.get("/invite/:token", async (c) => {
  const token = c.req.param("token");
  return render(c, await openInvitation(c.var.db, token), token);
});

const newAccount = z.object({ name: z.string().trim().min(1).max(120), password: z.string().min(10).max(1024) });

/** Accepts in one transaction: (the new account,) the membership, the invitation marked used, the event. */
async function accept(db: Database, inv: Invitation, tokenHash: string, who: { userId: string } | { name: string; passwordHash: string }) {
  return withStore(db, inv.storeId, async (tx) => {
    const [locked] = await tx
      .select({ id: staffInvitation.id })
      .from(staffInvitation)
      .where(and(eq(staffInvitation.storeId, tx.storeId), eq(staffInvitation.tokenHash, tokenHash), isNull(staffInvitation.acceptedAt), isNull(staffInvitation.revokedAt), sql`${staffInvitation.expiresAt} > now()`))
      .for("update");
    if (!locked) throw invalidLink();
    let userId: string;
    if ("userId" in who) userId = who.userId;
    else {
      const [created] = await tx.insert(userAccount).values({ email: inv.email, name: who.name, passwordHash: who.passwordHash }).onConflictDoNothing().returning({ id: userAccount.id });
      if (!created) throw new AppError("CONFLICT", "An account with this email exists already: sign in, then open the link again.");
      userId = created.id;
    }
    const [m] = await tx.insert(member).values({ storeId: tx.storeId, userId, role: inv.role }).onConflictDoNothing().returning({ id: member.id });
    await tx.update(staffInvitation).set({ acceptedAt: sql`now()` }).where(eq(staffInvitation.id, locked.id));
    if (m) await emit(tx, "staff.joined", { memberId: m.id, invitationId: locked.id, role: inv.role });
    return userId;
  });
}

invite.post("/invite/:token", async (c) => {
  const token = c.req.param("token");
  const inv = await openInvitation(c.var.db, token);
  const tokenHash = await sha256Hex(token);
  // A signed-in member joins with the session's CSRF token; someone signed out creates an account.
  const { signedIn, form } = await sessionForm(c, currentSession);
  if (signedIn) {
    if (signedIn.info.email.toLowerCase() !== inv.email.toLowerCase()) return render(c, inv, token, "This invitation is for another email address.", 400);
    await accept(c.var.db, inv, tokenHash, { userId: signedIn.info.userId });
    await c.var.db.orm.update(session).set({ activeStoreId: inv.storeId }).where(eq(session.idHash, signedIn.info.idHash));
    return c.redirect("/", 303);
  }
  const parsed = newAccount.safeParse(form);
  if (!parsed.success) {
    const issue = issuesOf(parsed.error)[0];
    return render(c, inv, token, `Check ${issue?.path ?? "the form"}: ${issue?.message ?? "invalid"}.`, 400);
  }
  const userId = await accept(c.var.db, inv, tokenHash, { name: parsed.data.name, passwordHash: await hashPassword(parsed.data.password) });
  const sessionId = await createSession(c.var.db, userId, inv.storeId, { userAgent: c.req.header("user-agent") ?? null, ip: c.req.header("cf-connecting-ip") ?? null });
  setSessionCookie(c, sessionId);
  return c.redirect("/", 303);
});
