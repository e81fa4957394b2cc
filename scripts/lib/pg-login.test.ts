import { Client, neonConfig } from "@neondatabase/serverless";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { WebSocket } from "ws";
import { startupParameters } from "./pg-login";
import { startWsProxy, type RunningProxy } from "./ws-proxy";

// The Workers' driver, in Node, against the test database through a proxy of our own: the same path as in workerd.
let proxy: RunningProxy;
beforeAll(async () => {
  proxy = await startWsProxy(0);
  neonConfig.webSocketConstructor = WebSocket;
  neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxy.port}/v2?address=${host}:${port}`;
  Object.assign(neonConfig, { useSecureWebSocket: false, pipelineTLS: false, forceDisablePgSSL: true });
});
afterAll(() => proxy.close());

const withPassword = (url: string, password: string) => {
  const u = new URL(url);
  u.password = password;
  return u.toString();
};

async function run(url: string, sql: string, pipelineConnect: "password" | false = false): Promise<unknown> {
  neonConfig.pipelineConnect = pipelineConnect;
  const client = new Client(url);
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

const errorCode = (p: Promise<unknown>) => p.then(() => "no error", (e: { code?: string }) => e.code);

describe("logging in as Neon's proxy does", () => {
  it("asks the driver for its password and does SCRAM with Postgres itself: two turns to connect", async () => {
    proxy.resetStats();
    expect(await run(inject("databaseUrl"), "select current_user as who")).toEqual([{ who: "app_user" }]);
    // startup, password, the query, Terminate.
    expect(proxy.stats().turns).toBe(4);

    // Copying bytes only, the driver runs SCRAM itself: startup, SASL initial response, SASL response, the query, Terminate.
    const bytes = await startWsProxy(0, { login: "bytes" });
    const port = proxy.port;
    try {
      neonConfig.wsProxy = (host, p) => `127.0.0.1:${bytes.port}/v2?address=${host}:${p}`;
      expect(await run(inject("databaseUrl"), "select 1 as one")).toEqual([{ one: 1 }]);
      expect(bytes.stats().turns).toBe(5);
    } finally {
      neonConfig.wsProxy = (host, p) => `127.0.0.1:${port}/v2?address=${host}:${p}`;
      await bytes.close();
    }
  });

  it("works with Neon's pipelined connect (startup, password and the first query in one message)", async () => {
    proxy.resetStats();
    expect(await run(inject("databaseUrl"), "select 1 as one", "password")).toEqual([{ one: 1 }]);
    expect(proxy.stats().turns).toBe(2); // that message, then Terminate
  });

  it("still lets Postgres judge the password, and passes its errors on as they are", async () => {
    expect(await errorCode(run(withPassword(inject("databaseUrl"), "wrong"), "select 1"))).toBe("28P01");
    expect(await errorCode(run(inject("noSlotsDatabaseUrl"), "select 1"))).toBe("53300");
  });
});

describe("startupParameters", () => {
  const body = Buffer.from("user\0app_user\0application_name\0t:abcd-1234\0\0");
  const startup = Buffer.concat([Buffer.from([0, 0, 0, body.length + 8, 0, 3, 0, 0]), body]);
  const sslRequest = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

  it("reads the StartupMessage's parameters, after an SSLRequest too, once all of it has arrived", () => {
    const params = { user: "app_user", application_name: "t:abcd-1234" };
    expect(startupParameters(startup)).toEqual(params);
    expect(startupParameters(Buffer.concat([sslRequest, startup]))).toEqual(params);
    expect(startupParameters(startup.subarray(0, 20))).toBe("incomplete");
    expect(startupParameters(sslRequest)).toBe("incomplete");
  });

  it("answers null for what is no StartupMessage", () => {
    expect(startupParameters(Buffer.from([0, 0, 0, 16, 4, 210, 22, 46, 0, 0, 0, 1, 0, 0, 0, 2]))).toBeNull(); // CancelRequest
    expect(startupParameters(Buffer.from("GET / HTTP/1.1\r\n"))).toBeNull();
  });
});
