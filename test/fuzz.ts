import fc from "fast-check";
import { expect } from "vitest";
import { z } from "zod";

/**
 * Generated hostile input for the doors' fuzz suites (workers/admin/fuzz.test.ts,
 * workers/storefront/fuzz.test.ts; docs/decisions/0023-inputs-at-the-door.md). Every value belongs to one
 * of the classes that once answered a server error: wrong types, numbers and dates out of range, control
 * characters with NUL, huge strings, deep nesting. Seeded and bounded: a run is the same every time.
 */
export const FUZZ_SEED = 20_2018;

/** JSON nested `depth` levels deep (arrays and objects by turns). */
export function nested(depth: number, leaf: unknown = 1): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
}

const CONTROL = ["\u0000", "\u0001", "\u0008", "\u001b", "\u007f", "\u0085", "\ud800", "\udfff", "\ufeff", "\uffff", "\r\n", "\u2028"];

export const controlText = fc
  .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...CONTROL), fc.string({ maxLength: 8 }))
  .map(([a, c, b]) => `${a}${c}${b}`);
export const nulText = fc.tuple(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 })).map(([a, b]) => `${a}\u0000${b}`);
export const hugeText = fc.constantFrom(5_000, 70_000, 200_000).map((n) => "x".repeat(n));
export const badNumber = fc.constantFrom(-1, 0, -0, 0.5, -2_147_483_649, 2_147_483_648, 2 ** 53 + 2, 1e21, 1e308, -1e308, 99_999_999_999);
export const badDate = fc.constantFrom(
  "0000-01-01T00:00:00Z",
  "0001-01-01T00:00:00+14:00",
  "0050-06-15T12:00:00Z",
  "9999-12-31T23:59:59-12:00",
  "10000-01-01T00:00:00Z",
  "-000001-01-01T00:00:00Z",
  "2025-02-30T00:00:00Z",
  "2025-13-01T00:00:00Z",
  "0000-01-01",
  "0001-01-01",
  "9999-12-31",
  "1970-01-01T00:00:00.123456789+23:59",
);
export const wrongType = fc.oneof(fc.constant(null), fc.boolean(), fc.integer(), fc.double(), fc.constant([]), fc.constant({}), fc.string({ maxLength: 12 }));
export const deepValue = fc.integer({ min: 33, max: 3_000 }).map((d) => nested(d));
/** Ids that parse: a real-looking uuid gets further than junk (to "not found" and the statements behind it). */
export const someId = fc.uuid();

/** `text` with each lone surrogate as U+FFFD, as a browser encodes it into a URL or a form. */
export const wellFormed = (text: string): string => text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** One hostile value of any class. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(wrongType, badNumber, badDate, controlText, nulText, hugeText, deepValue, someId);

/** What a JSON schema property of a procedure's input expects, as a hint for which class to favour. */
type Hint = "date" | "number" | "string" | "array" | "object" | "other";

function hintOf(schema: Record<string, unknown> | undefined): Hint {
  if (!schema) return "other";
  const format = schema["format"];
  if (format === "date-time" || format === "date") return "date";
  const type = schema["type"] ?? (schema["anyOf"] as Record<string, unknown>[] | undefined)?.map((s) => s["type"]).find((t) => t && t !== "null");
  if (type === "integer" || type === "number") return "number";
  if (type === "string") return "string";
  if (type === "array") return "array";
  if (type === "object") return "object";
  return "other";
}

/** A hostile value for a property, favouring its own class (a date field mostly gets bad dates). */
function valueFor(hint: Hint): fc.Arbitrary<unknown> {
  switch (hint) {
    case "date":
      return fc.oneof({ weight: 4, arbitrary: badDate }, { weight: 1, arbitrary: hostileValue });
    case "number":
      return fc.oneof({ weight: 3, arbitrary: badNumber }, { weight: 1, arbitrary: hostileValue });
    case "string":
      return fc.oneof({ weight: 2, arbitrary: fc.oneof(controlText, nulText, hugeText) }, { weight: 1, arbitrary: hostileValue });
    case "array":
    case "object":
      return fc.oneof({ weight: 2, arbitrary: deepValue }, { weight: 1, arbitrary: hostileValue });
    case "other":
      return hostileValue;
  }
}

/** The properties of a zod input, each with its hint (none for inputs that are not objects). */
export function propertiesOf(input: z.ZodType): Record<string, Hint> {
  const schema = z.toJSONSchema(input, { io: "input", unrepresentable: "any" }) as { properties?: Record<string, Record<string, unknown>> };
  return Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, v]) => [k, hintOf(v)]));
}

/**
 * The cases every input of these properties is tried with before the generated ones (fast-check's
 * `examples`), so each class reaches each procedure whatever the seed draws: every date property alone
 * at year 0000 and past 9999 once its offset is applied, and every text property holding a NUL.
 */
export function classExamples(properties: Record<string, Hint>): unknown[] {
  const names = Object.keys(properties);
  const dates = names.filter((n) => properties[n] === "date");
  const texts = names.filter((n) => properties[n] === "string");
  return [
    ...dates.flatMap((n) => [{ [n]: "0000-01-01T00:00:00Z" }, { [n]: "9999-12-31T23:00:00-05:00" }, { [n]: "0000-01-01" }]),
    ...(texts.length > 0 ? [Object.fromEntries(texts.map((n) => [n, "a\u0000b"]))] : []),
  ];
}

/**
 * Hostile input for an object of these properties: the whole input of a wrong type, or some of its
 * properties (one at a time more often than all together, so the others' defaults let a bad one through
 * to the statements behind validation), plus now and then a property nobody declared.
 */
export function hostileObject(properties: Record<string, Hint>): fc.Arbitrary<unknown> {
  const names = Object.keys(properties);
  const one =
    names.length === 0
      ? fc.constant({})
      : fc.constantFrom(...names).chain((name) => valueFor(properties[name]!).map((value) => ({ [name]: value })));
  const some = fc.record(Object.fromEntries(names.map((n) => [n, valueFor(properties[n]!)])), { requiredKeys: [] });
  const extra = fc.tuple(fc.oneof(controlText, fc.string({ maxLength: 6 })), hostileValue).map(([k, v]) => ({ [k]: v }));
  return fc.oneof({ weight: 4, arbitrary: one }, { weight: 2, arbitrary: some }, { weight: 1, arbitrary: extra }, { weight: 1, arbitrary: fc.oneof(wrongType, deepValue, nulText) });
}

/** What an answer may never show: SQL, the server's files, a stack. */
const LEAKS: [string, RegExp][] = [
  ["SQL", /\b(select\s[\s\S]{0,200}?\sfrom|insert\s+into|delete\s+from|update\s+\w+\s+set)\b|\bsqlstate\b|violates (check|unique|foreign key|not-null) constraint|syntax error at or near|relation "\w+"|invalid input syntax for/i],
  ["a file path", /\/work\/|node_modules|file:\/\/|\b[\w-]+\.(?:ts|tsx|js|mjs):\d+/],
  ["a stack", /\n\s+at [\w$.<>[\] ]+ \(|\bat async \w/],
];

export interface Answered {
  status: number;
  body: string;
  contentType: string;
}

export async function answered(res: Response): Promise<Answered> {
  return { status: res.status, body: await res.text(), contentType: res.headers.get("content-type") ?? "" };
}

/** Whether a refusal says why: a JSON error with a message (our envelope, OAuth's, JSON-RPC's, UCP's), or an error page with text. */
function hasReason(a: Answered): boolean {
  if (a.contentType.includes("json")) {
    try {
      const body = JSON.parse(a.body) as { json?: { code?: unknown; message?: unknown }; error?: unknown; error_description?: unknown };
      if (body.json) return typeof body.json.code === "string" && typeof body.json.message === "string" && body.json.message.length > 0;
      if (typeof body.error === "string") return typeof body.error_description === "string" && body.error_description.length > 0;
      if (typeof body.error === "object" && body.error !== null) return typeof (body.error as { message?: unknown }).message === "string";
      // UCP's protocol errors (`{code, content}`) and its error response (`{ucp, messages: [{content}]}`).
      const ucp = body as { code?: unknown; content?: unknown; messages?: { content?: unknown }[] };
      if (typeof ucp.code === "string") return typeof ucp.content === "string" && ucp.content.length > 0;
      if (Array.isArray(ucp.messages)) return typeof ucp.messages[0]?.content === "string";
      return false;
    } catch {
      return false;
    }
  }
  if (a.contentType.includes("html")) return /<h1[^>]*>[^<]+/.test(a.body) || /<p[^>]*>[^<]+/.test(a.body);
  return a.status === 405 || a.status === 413 || a.status === 429 || a.body.trim().length > 0;
}

/**
 * JSON-RPC's own server errors in a 200 (MCP): -32603 Internal error, or a tool's result that says INTERNAL.
 * A client's mistake is -32600/-32602 or a tool error naming the field.
 */
function jsonRpcServerError(a: Answered): boolean {
  if (!a.contentType.includes("json")) return false;
  let body: unknown;
  try {
    body = JSON.parse(a.body);
  } catch {
    return false;
  }
  const answers = (Array.isArray(body) ? body : [body]) as { jsonrpc?: unknown; error?: { code?: unknown }; result?: { isError?: unknown; content?: { text?: unknown }[] } }[];
  return answers.some(
    (m) => m?.jsonrpc === "2.0" && (m.error?.code === -32603 || (m.result?.isError === true && m.result.content?.some((c) => typeof c.text === "string" && c.text.includes('"code":"INTERNAL"')))),
  );
}

/** The suites' one property: never a server error, a 4xx says why, nothing leaks. */
export function expectNoServerError(label: string, input: unknown, a: Answered): void {
  const shown = () => `${label} ${JSON.stringify(input)?.slice(0, 300)} -> ${a.status} ${a.body.slice(0, 300)}`;
  expect(a.status < 500, shown()).toBe(true);
  expect(jsonRpcServerError(a), `a JSON-RPC server error: ${shown()}`).toBe(false);
  if (a.status >= 400) expect(hasReason(a), `no reason given: ${shown()}`).toBe(true);
  for (const [what, pattern] of LEAKS) expect(pattern.test(a.body), `leaks ${what}: ${shown()}`).toBe(false);
}

/** fast-check's settings for the suites: the fixed seed, the examples, then `numRuns` generated runs; the first failure reported as found. */
export function fuzzRuns(numRuns: number): { seed: number; numRuns: number; endOnFailure: true };
export function fuzzRuns<T>(numRuns: number, examples: T[]): { seed: number; numRuns: number; endOnFailure: true; examples: [T][] };
export function fuzzRuns<T>(numRuns: number, examples?: T[]) {
  // fast-check counts the examples among the runs.
  return { seed: FUZZ_SEED, numRuns: numRuns + (examples?.length ?? 0), endOnFailure: true as const, ...(examples ? { examples: examples.map((e): [T] => [e]) } : {}) };
}
