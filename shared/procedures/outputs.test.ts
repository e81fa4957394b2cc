import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { constant } from "#shared/db/plan";
import type { Q } from "#shared/db/steps";
import { PROCEDURES } from "#shared/registry/procedures";
import { testDb } from "../../test/harness";
import { storeWithCaller } from "../../test/procedures";
import { isSessionProcedure, procedureKey, sessionProcedure, storeProcedure, type SessionContext, type StoreContext } from "./define";
import { checkOutputs, outputsChecked } from "./outputs";
import * as out from "./outputs";
import type { Scope } from "./scope";

describe("every procedure's output schema", () => {
  it("is declared, and converts to JSON Schema as the OpenAPI document and MCP outputSchema make it", () => {
    const missing = PROCEDURES.filter((p) => !(p.output instanceof z.ZodType)).map(procedureKey);
    expect(missing).toEqual([]);
    for (const p of PROCEDURES) {
      let schema: unknown;
      expect(() => (schema = z.toJSONSchema(p.output, { io: "output" })), procedureKey(p)).not.toThrow();
      expect(schema, procedureKey(p)).toHaveProperty("type");
    }
  });

  it("describes instants as ISO 8601 text (what JSON.stringify makes of a Date)", () => {
    expect(z.toJSONSchema(out.instant, { io: "output" })).toMatchObject({ type: "string", format: "date-time" });
    expect(out.instant.safeParse(JSON.parse(JSON.stringify(new Date(Date.UTC(50, 0, 1))))).success).toBe(true);
    // Postgres's JSON of a timestamptz (an order's shipments, from json_build_object): microseconds and an offset.
    expect(out.instant.safeParse("2026-11-26T15:12:26.123456+05:30").success).toBe(true);
  });
});

describe("the output check", () => {
  // Tests run with the check on (test/check-outputs.ts); these turn it off and back.
  afterEach(() => checkOutputs(true));
  const q = {} as Q;
  const scope = {} as Scope;
  const ctx = {} as StoreContext;
  const output = z.object({ id: z.string(), at: out.instant, count: z.number().int() });
  const wrong = { id: "a", at: new Date(0), count: "3" } as unknown as { id: string; at: Date; count: number };
  const right = { id: "a", at: new Date(0), count: 3 };

  const reading = storeProcedure({ router: "check", name: "read", description: "", access: "none", mutates: false, input: z.strictObject({}), output, read: () => constant(wrong) });
  const writing = storeProcedure({
    router: "check",
    name: "write",
    description: "",
    access: "none",
    mutates: true,
    input: z.strictObject({}),
    output,
    write: { apply: () => constant(wrong) },
  });
  const running = storeProcedure({ router: "check", name: "run", description: "", access: "none", mutates: true, input: z.strictObject({}), output, run: async () => wrong });
  const session = sessionProcedure({ router: "check", name: "session", description: "", mutates: false, input: z.strictObject({}), output, run: async () => wrong });
  const fine = storeProcedure({ router: "check", name: "fine", description: "", access: "none", mutates: false, input: z.strictObject({}), output, read: () => constant(right) });

  it("is on in tests", () => {
    expect(outputsChecked()).toBe(true);
  });

  it("throws naming the procedure and zod's issues when a read plan, a write plan's apply, a run or a session procedure answers outside its schema", async () => {
    expect(() => reading.read!(q, scope, {}).finish([])).toThrow(/^check\.read answered outside its output schema: count: .*expected number/);
    expect(() => writing.write!.apply(q, scope, {}, undefined).finish([])).toThrow(/^check\.write answered outside its output schema: count:/);
    await expect(running.run(ctx, {})).rejects.toThrow(/^check\.run answered outside its output schema: count:/);
    await expect(session.run({} as SessionContext, {})).rejects.toThrow(/^check\.session answered outside its output schema: count:/);
  });

  it("throws naming a field the answer has and the schema does not declare, at any depth", () => {
    const extra = storeProcedure({
      router: "check",
      name: "extra",
      description: "",
      access: "none",
      mutates: false,
      input: z.strictObject({}),
      output: z.object({ items: z.array(z.object({ id: z.string() })) }),
      // What TypeScript cannot see: an answer wider than its declared type (a plan typed by a narrower annotation).
      read: () => constant({ items: [{ id: "a" }, { id: "b", secret: "s" }], total: 2 } as { items: { id: string }[] }),
    });
    expect(() => extra.read!(q, scope, {}).finish([])).toThrow("check.extra answered outside its output schema: items.1.secret: a field the schema does not declare; total: a field the schema does not declare");
  });

  it("passes an answer that fits (a Date as its JSON text) through unchanged", () => {
    expect(fine.read!(q, scope, {}).finish([])).toBe(right);
  });

  it("lets every answer through unchanged when off (production)", async () => {
    checkOutputs(false);
    expect(reading.read!(q, scope, {}).finish([])).toBe(wrong);
    expect(writing.write!.apply(q, scope, {}, undefined).finish([])).toBe(wrong);
    await expect(running.run(ctx, {})).resolves.toBe(wrong);
    await expect(session.run({} as SessionContext, {})).resolves.toBe(wrong);
  });
});

describe("every read procedure on a store with a row in every table (test/harness.ts makeStore)", () => {
  it("answers within its output schema", async () => {
    expect(outputsChecked()).toBe(true);
    const { call } = await storeWithCaller(testDb());
    const first = async (key: string, input: unknown = {}) => ((await call(key, input)) as { items: { id: string }[] }).items[0]!.id;
    const [product, order, customer, page, collection, campaign, app, conversation] = await Promise.all(
      ["products.list", "orders.list", "customers.list", "content.list", "collections.list", "campaigns.list", "apps.list", "assistant.conversations"].map((k) => first(k)),
    );
    const level = ((await call("inventory.levels", {})) as { items: { variantId: string; locationId: string }[] }).items[0]!;
    // The inputs of reads that need one; every other read is called with none.
    const inputs: Record<string, unknown> = {
      "products.get": { id: product },
      "media.list": { productId: product },
      "orders.get": { id: order },
      "orders.invoices": { id: order },
      "customers.get": { id: customer },
      "content.get": { id: page },
      "collections.get": { id: collection },
      "campaigns.get": { id: campaign },
      "apps.get": { id: app },
      "inventory.history": { variantId: level.variantId, locationId: level.locationId },
      "analytics.summary": { from: "2026-01-01", to: "2026-12-31" },
      "assistant.conversation": { id: conversation },
    };
    const reads = PROCEDURES.filter((p) => !p.mutates && !isSessionProcedure(p));
    const failures: string[] = [];
    for (const p of reads) {
      const key = procedureKey(p);
      await call(key, inputs[key] ?? {}).catch((e: unknown) => failures.push(`${key}: ${e instanceof Error ? e.message : String(e)}`));
    }
    expect(failures).toEqual([]);
    expect(reads.length).toBeGreaterThan(40);
  });
});
