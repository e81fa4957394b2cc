import { describe, expect, it } from "vitest";
import { sha256Hex } from "#shared/core/tokens";
import { withStore } from "#shared/db/with-store";
import { makeStore, testDb, uniqueSuffix } from "../../test/harness";
import { addMember } from "../../test/procedures";
import { page, postForm, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";

const db = testDb();

describe("staff procedures", () => {
  it("the last Owner can be neither demoted nor removed; with two Owners one may go", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const demote = await rpc(owner, "staff/setRole", { memberId: s.memberId, role: "admin" });
    expect(demote.status).toBe(409);
    expect(await rpcJson<RpcError>(demote)).toMatchObject({ code: "CONFLICT", data: { reason: "last_owner" } });
    expect((await rpc(owner, "staff/remove", { memberId: s.memberId })).status).toBe(409);

    const second = await addMember(db, s, "admin");
    expect((await rpc(owner, "staff/setRole", { memberId: second.memberId, role: "owner" })).status).toBe(200);
    expect((await rpc(owner, "staff/setRole", { memberId: s.memberId, role: "admin" })).status).toBe(200);
    // Now the second person is the last Owner.
    const theirs = await sessionFor(db, second.userId, s.id);
    expect((await rpc(theirs, "staff/remove", { memberId: second.memberId })).status).toBe(409);
    const list = await rpcJson<{ members: { id: string; role: string }[] }>(await rpc(theirs, "staff/list"));
    expect(list.members.filter((m) => m.role === "owner").map((m) => m.id)).toEqual([second.memberId]);
  });

  it("two Owners demoting each other at the same moment leave exactly one Owner", async () => {
    for (let round = 0; round < 3; round++) {
      const s = await makeStore(db);
      const second = await addMember(db, s, "owner");
      const first = await sessionFor(db, s.ownerUserId, s.id);
      const other = await sessionFor(db, second.userId, s.id);
      const results = await Promise.all([
        rpc(first, "staff/setRole", { memberId: second.memberId, role: "staff" }),
        rpc(other, "staff/setRole", { memberId: s.memberId, role: "staff" }),
      ]);
      // The loser is refused either as the last Owner (409) or, if the winner committed before its
      // permission check, because it is no longer an Owner (403). Never both demoted.
      const statuses = results.map((r) => r.status).sort();
      expect(statuses[0]).toBe(200);
      expect([403, 409]).toContain(statuses[1]);
      const owners = await withStore(db, s.id, (tx) => tx.$client.query("select id from member where role = 'owner'"));
      expect(owners.rowCount).toBe(1);
    }
  });

  it("a role change takes effect on the member's next call", async () => {
    const s = await makeStore(db);
    const admin = await addMember(db, s, "admin");
    const theirs = await sessionFor(db, admin.userId, s.id);
    expect((await rpc(theirs, "store/current")).status).toBe(200);
    await rpc(await sessionFor(db, s.ownerUserId, s.id), "staff/setRole", { memberId: admin.memberId, role: "staff" });
    expect((await rpc(theirs, "store/current")).status).toBe(403);
  });

  it("an invitation link is answered once, stored as a hash, and makes a new account a member", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const email = `new-${uniqueSuffix()}@example.test`;
    const res = await rpc(owner, "staff/invite", { email, role: "staff" });
    expect(res.status).toBe(200);
    const { acceptPath, invitation } = await rpcJson<{ acceptPath: string; invitation: { id: string } }>(res);
    const token = acceptPath.split("/").pop()!;
    const stored = await withStore(db, s.id, (tx) => tx.$client.query<{ token_hash: string }>("select token_hash from staff_invitation where id = $1", [invitation.id]));
    expect(stored.rows[0]?.token_hash).toBe(await sha256Hex(token));
    expect(JSON.stringify(stored.rows)).not.toContain(token);

    const form = await page(null, acceptPath);
    expect(form.status).toBe(200);
    expect(await form.text()).toContain("Create account and join");
    const tooShort = await postForm(null, acceptPath, { name: "New Person", password: "short" });
    expect(tooShort.status).toBe(400);
    const joined = await postForm(null, acceptPath, { name: "New Person", password: "a long enough password" });
    expect(joined.status).toBe(303);
    const cookie = (joined.headers.get("set-cookie") ?? "").split(";")[0]!;
    const me = await rpcJson<{ member: { role: string }; store: { id: string } }>(await rpc({ cookie, csrf: "", sessionId: "" }, "staff/me"));
    expect(me).toMatchObject({ member: { role: "staff" }, store: { id: s.id } });
    expect((await page(null, acceptPath)).status).toBe(404);
  });

  it("an existing member signed in with the invited email joins a second store with one click", async () => {
    const a = await makeStore(db);
    const b = await makeStore(db);
    const invited = await addMember(db, a, "staff");
    const res = await rpc(await sessionFor(db, b.ownerUserId, b.id), "staff/invite", { email: invited.email.toUpperCase(), role: "admin" });
    const { acceptPath } = await rpcJson<{ acceptPath: string }>(res);
    const theirs = await sessionFor(db, invited.userId, a.id);
    expect(await (await page(theirs, acceptPath)).text()).toContain(`Join ${b.name}`);
    const join = await postForm(theirs, acceptPath, { csrf: theirs.csrf });
    expect(join.status).toBe(303);
    const me = await rpcJson<{ member: { role: string }; store: { id: string } }>(await rpc(theirs, "staff/me"));
    expect(me).toMatchObject({ member: { role: "admin" }, store: { id: b.id } });
    const again = await rpc(await sessionFor(db, b.ownerUserId, b.id), "staff/invite", { email: invited.email, role: "staff" });
    expect(again.status).toBe(409);
  });
});
