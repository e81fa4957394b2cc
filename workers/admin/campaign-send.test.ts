import { describe, expect, it } from "vitest";
import { AREA_SCOPES } from "#shared/auth/grants";
import { withStore } from "#shared/db/with-store";
import { api, createToken, rpc, rpcJson, sessionFor, type RpcError } from "../../test/admin";
import { makeStore, testDb, type TestStore } from "../../test/harness";
import { connectMcpClient } from "../../test/oauth";
import { addMember } from "../../test/procedures";

/**
 * Sending a campaign mails every consenting customer (issue 20 item 15; decision 0021): scheduling,
 * changing and cancelling one need `marketing.send`, a member's permission (Owner and Admin) that no grant
 * area yields, `content` write included. Through the real doors: the session RPC, the token API, MCP.
 */
const db = testDb();

const campaign = { name: "Diwali", subject: "Hello {{first_name}}", body: "Our sale starts now.", audience: "subscribers", startsAt: "2030-01-01T09:00:00+05:30" };

const campaigns = (s: TestStore) =>
  withStore(db, s.id, (tx) => tx.$client.query<{ name: string; subject: string; status: string }>("select name, subject, status from campaign where name <> 'Fixture' order by created_at")).then(
    (r) => r.rows,
  );

describe("a campaign's send is a member's permission", () => {
  it("Owner and Admin schedule, change and cancel one in a session; Staff are refused", async () => {
    const s = await makeStore(db);
    const admin = await sessionFor(db, (await addMember(db, s, "admin")).userId, s.id);
    const staff = await sessionFor(db, (await addMember(db, s, "staff")).userId, s.id);
    const refused = await rpc(staff, "campaigns/create", campaign);
    expect(refused.status).toBe(403);
    expect(await rpcJson<RpcError>(refused)).toMatchObject({ message: "Your role does not allow sending marketing (marketing.send).", data: { permission: "marketing.send" } });
    const made = await rpcJson<{ id: string; status: string }>(await rpc(admin, "campaigns/create", campaign));
    expect(made.status).toBe("scheduled");
    expect((await rpc(staff, "campaigns/update", { id: made.id, subject: "Spam" })).status).toBe(403);
    expect((await rpc(staff, "campaigns/cancel", { id: made.id })).status).toBe(403);
    expect((await rpc(staff, "campaigns/list", {})).status).toBe(200);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    expect(await rpcJson(await rpc(owner, "campaigns/update", { id: made.id, subject: "Hi {{first_name}}" }))).toMatchObject({ subject: "Hi {{first_name}}" });
    expect(await rpcJson(await rpc(admin, "campaigns/cancel", { id: made.id }))).toMatchObject({ status: "cancelled" });
  });

  it("a token is refused even with every area written, content included; it still reads campaigns", async () => {
    const s = await makeStore(db);
    const owner = await sessionFor(db, s.ownerUserId, s.id);
    const scheduled = await rpcJson<{ id: string }>(await rpc(owner, "campaigns/create", campaign));
    const { token } = await createToken(owner, [...AREA_SCOPES]);
    for (const [path, input] of [
      ["campaigns/create", campaign],
      ["campaigns/update", { id: scheduled.id, subject: "Spam" }],
      ["campaigns/cancel", { id: scheduled.id }],
    ] as const) {
      const res = await api(token, path, input);
      expect(res.status, path).toBe(403);
      expect(await rpcJson<RpcError>(res)).toMatchObject({ code: "FORBIDDEN", data: { permission: "marketing.send", reason: "members_only" } });
    }
    const listed = await rpcJson<{ items: { name: string }[] }>(await api(token, "campaigns/list", {}));
    expect(listed.items.map((k) => k.name)).toContain("Diwali");
    expect(await campaigns(s)).toEqual([{ name: "Diwali", subject: "Hello {{first_name}}", status: "scheduled" }]);
  });

  it("MCP lists no campaign tool for a connection with content and customers write, and calling one finds nothing", async () => {
    const { client, store } = await connectMcpClient(db, { areas: ["content:write", "customers:write"] });
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names.filter((n) => /campaign/i.test(n))).toEqual([]);
    for (const name of ["createCampaign", "campaigns.create", "cancelCampaign"]) {
      const res = await client.callTool({ name, arguments: campaign });
      expect(res.isError, name).toBe(true);
      expect(JSON.stringify(res.content)).toMatch(/not found/);
    }
    expect(await campaigns(store)).toEqual([]);
  });
});
