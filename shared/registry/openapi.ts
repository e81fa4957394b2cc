import { z } from "zod";
import { proposalAnswerOutput } from "../assistant/approvals";
import { AREA_SCOPES, areasYielding } from "../auth/grants";
import { ERROR_STATUS, type ErrorCode } from "../core/errors";
import { rateLimitHeaders } from "../limits/window";
import { IDEMPOTENCY_HEADER, KEY_IN_USE, KEY_LIFETIME_HOURS, KEY_MAX_LENGTH, KEY_PATTERN, REPLAYED_HEADER } from "../pipeline/idempotency-key";
import { isSessionProcedure, procedureKey, type Procedure, type StoreProcedure } from "../procedures/define";
import { PROCEDURES } from "./procedures";

/**
 * The OpenAPI 3.1 document of the token API (`POST /api/v1/<router>/<procedure>`), made from the registry:
 * every procedure a token can call, its input and output as zod's own JSON Schema (z.toJSONSchema, no copy),
 * the bearer scheme, the area each needs, the closed error set and the rate-limit headers. Served at
 * GET /api/v1/openapi.json (workers/admin/openapi.ts); `npm run openapi` writes docs/openapi.json and the
 * generated client types (test/generated/api-v1.d.ts) from it.
 */

type JsonSchema = Record<string, unknown>;
type Io = "input" | "output";

/**
 * The options every schema of the document is converted with. A `Date` is answered as its JSON (an ISO
 * string); any other type JSON Schema cannot express is left unconstrained rather than failing the document.
 */
export function jsonSchemaOptions(io: Io): Parameters<typeof z.toJSONSchema>[1] {
  return {
    target: "draft-2020-12",
    io,
    unrepresentable: ({ zodSchema }) => (zodSchema._zod.def.type === "date" ? { type: "string", format: "date-time" } : "any"),
  };
}

/** The procedures a token may call: a permission some grant area yields (never session, member-only or reserved ones). */
export function tokenProcedures(procs: readonly Procedure[] = PROCEDURES): StoreProcedure[] {
  return procs.filter((p): p is StoreProcedure => !isSessionProcedure(p) && p.access !== "none" && areasYielding(p.access).length > 0);
}

/** The area scope a token needs for a procedure: the lowest that yields its permission (`products:read`). */
export function requiredArea(proc: StoreProcedure): string {
  if (proc.access === "none") throw new TypeError(`${procedureKey(proc)} names no permission`);
  return areasYielding(proc.access)[0]!;
}

export const operationId = (p: { router: string; name: string }) => `${p.router}_${p.name}`;
export const schemaName = (p: { router: string; name: string }, io: Io) => `${operationId(p)}_${io}`;

const ref = (name: string, kind = "schemas") => ({ $ref: `#/components/${kind}/${name}` });

/**
 * zod's JSON Schema of one procedure schema as a component: its `$schema` dropped (the document's dialect
 * is 2020-12) and its `$defs` (recursive types) hoisted beside it as `<name>.<def>`, refs rewritten.
 */
export function componentSchemas(name: string, schema: JsonSchema): Record<string, JsonSchema> {
  const { $schema: _dialect, $defs, ...body } = schema as JsonSchema & { $defs?: Record<string, JsonSchema> };
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, k === "$ref" && typeof v === "string" && v.startsWith("#/$defs/") ? ref(`${name}.${v.slice(8)}`).$ref : rewrite(v)]),
    );
  };
  const out: Record<string, JsonSchema> = { [name]: rewrite(body) as JsonSchema };
  for (const [def, s] of Object.entries($defs ?? {})) out[`${name}.${def}`] = rewrite(s) as JsonSchema;
  return out;
}

// The door's own refusals (workers/admin/api-v1.ts, shared/pipeline/check.ts, shared/db/unavailable.ts),
// named in the error responses so a client knows what to branch on; procedures add their own reasons.
const DOOR_REASONS: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: "The body is not JSON or the input does not fit the schema: `data.issues[]` names each field (`path`, dot-joined) and why.",
  UNAUTHORIZED:
    'No bearer (`data.reason` `no_token`) or an unknown, malformed, expired or revoked token (`invalid_token`). `WWW-Authenticate` names the resource metadata: `Bearer resource_metadata="<origin>/.well-known/oauth-protected-resource/api/v1"`.',
  FORBIDDEN:
    "The permission is outside the token's areas or the member's role (`data.permission`), or, for an OAuth connection, the store's AI-client settings refuse it (`data.reason` `customer_details_off` or `ai_changes_off`).",
  NOT_FOUND: "No such procedure, or no such record in the token's store (another store's ids are never found).",
  CONFLICT: "The record changed under the request (`data.reason` such as `concurrent_change`), or the state does not allow the change.",
  PAYLOAD_TOO_LARGE: "The body is over 1 MB.",
  UNSUPPORTED_MEDIA_TYPE: "The body is not sent as `content-type: application/json`.",
  UNPROCESSABLE_CONTENT: "The request is well formed but cannot be taken as sent.",
  TOO_MANY_REQUESTS: "Over the grant's calls per rolling minute (shared with MCP); decided before any database work. Wait `Retry-After` seconds.",
  INTERNAL: "A fault on our side; quote `requestId` if you report it.",
  SERVICE_UNAVAILABLE: "The database is busy (`data.reason` `database_unavailable`); retry after `Retry-After` seconds.",
};

const IDEMPOTENCY_REASONS: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: `A malformed \`${IDEMPOTENCY_HEADER}\` is named as the issue path \`${IDEMPOTENCY_HEADER}\`.`,
  CONFLICT:
    `\`data.reason\` \`${KEY_IN_USE}\`: the first request with this \`${IDEMPOTENCY_HEADER}\` is still running; retry in a few seconds to get its answer (\`idempotency_answer_lost\`: it was applied but its answer was not kept; read the record).`,
  UNPROCESSABLE_CONTENT:
    `\`data.reason\` \`idempotency_key_reused\`: this \`${IDEMPOTENCY_HEADER}\` was first used for another body or procedure (\`data.mismatch\` \`body\` or \`procedure\`, \`data.procedure\` the first one); use a new key for a new request.`,
};

const READ_ERRORS: ErrorCode[] = ["BAD_REQUEST", "UNAUTHORIZED", "FORBIDDEN", "NOT_FOUND", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "TOO_MANY_REQUESTS", "INTERNAL", "SERVICE_UNAVAILABLE"];
const CHANGE_ERRORS: ErrorCode[] = [...READ_ERRORS, "CONFLICT", "UNPROCESSABLE_CONTENT"];

// The rate-limit header names as the door sends them: RateLimit-Policy and RateLimit always, Retry-After on refusal.
const [POLICY_HEADER, LIMIT_HEADER, RETRY_HEADER] = Object.keys(
  rateLimitHeaders({ allowed: false, limit: 1, windowSeconds: 60, remaining: 0, resetSeconds: 1, retryAfterSeconds: 1 }),
) as [string, string, string];

const responseName = (code: ErrorCode, change: boolean) => `${code}${change && IDEMPOTENCY_REASONS[code] ? "_change" : ""}`;

function errorResponse(code: ErrorCode, change: boolean) {
  const words = [DOOR_REASONS[code], change ? IDEMPOTENCY_REASONS[code] : undefined].filter(Boolean).join(" ");
  const headers: Record<string, unknown> = {};
  if (code === "TOO_MANY_REQUESTS") Object.assign(headers, rateLimitResponseHeaders(), { [RETRY_HEADER]: ref("Retry-After", "headers") });
  if (code === "SERVICE_UNAVAILABLE") headers[RETRY_HEADER] = ref("Retry-After", "headers");
  if (code === "UNAUTHORIZED") headers["WWW-Authenticate"] = { description: "The bearer challenge with the resource metadata URL.", schema: { type: "string" } };
  return {
    description: `${code}. ${words}`,
    ...(Object.keys(headers).length ? { headers } : {}),
    // The shared Error, its `code` narrowed to this status's one: a typed client can branch on it.
    content: { "application/json": { schema: { allOf: [ref("Error"), envelope({ type: "object", properties: { code: { const: code } }, required: ["code"] })] } } },
  };
}

const rateLimitResponseHeaders = () => ({ [POLICY_HEADER]: ref(POLICY_HEADER, "headers"), [LIMIT_HEADER]: ref(LIMIT_HEADER, "headers") });

/** `{"json": <schema>}`, the envelope of every body the door reads and answers. */
const envelope = (schema: unknown) => ({ type: "object", properties: { json: schema }, required: ["json"], additionalProperties: false });

function operation(p: StoreProcedure) {
  const area = requiredArea(p);
  const alternatives = areasYielding(p.access as Exclude<StoreProcedure["access"], "none">);
  const ok = {
    description: "The procedure's answer.",
    headers: { ...rateLimitResponseHeaders(), ...(p.mutates ? { [REPLAYED_HEADER]: ref(REPLAYED_HEADER, "headers") } : {}) },
    content: { "application/json": { schema: envelope(ref(schemaName(p, "output"))) } },
  };
  const errors = (p.mutates ? CHANGE_ERRORS : READ_ERRORS).map((code) => [String(ERROR_STATUS[code]), ref(responseName(code, p.mutates), "responses")]);
  return {
    operationId: operationId(p),
    summary: procedureKey(p),
    description: `${p.description}\n\nNeeds a token with \`${alternatives.join("` or `")}\`${p.mutates ? "; changes something" : ""}.`,
    tags: [p.router],
    "x-required-area": area,
    "x-permission": p.access,
    "x-mutates": p.mutates,
    security: [{ bearer: [] }],
    ...(p.mutates ? { parameters: [ref(IDEMPOTENCY_HEADER, "parameters")] } : {}),
    requestBody: { required: true, content: { "application/json": { schema: envelope(ref(schemaName(p, "input"))) } } },
    responses: {
      "200": ok,
      ...(p.mutates ? { "202": ref("Proposed", "responses") } : {}),
      ...Object.fromEntries(errors),
    },
  };
}

// The 202 answer (workers/admin/api-v1.ts): an OAuth connection's change while the store's 'Changes need
// approval' is on answers `{proposal}`, the proposal as MCP change tools answer it (shared/assistant/approvals.ts).
export const proposedAnswerSchema = z.object({ proposal: proposalAnswerOutput });

const errorSchema = z.object({
  code: z.enum(Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]]).describe("One of the closed set; the status follows from it."),
  message: z.string().describe("What went wrong and what to do next, in words a merchant can act on."),
  data: z
    .object({
      reason: z.string().optional().describe("A stable machine word for the refusal (e.g. `no_token`, `ai_changes_off`, `idempotency_key_reused`)."),
      issues: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe("A 400's fields: dot-joined path and why."),
      permission: z.string().optional().describe("The permission a 403 refused."),
    })
    .catchall(z.unknown())
    .optional(),
  requestId: z.string(),
});

function procedureSchemas(procs: readonly StoreProcedure[]): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const p of procs) {
    Object.assign(out, componentSchemas(schemaName(p, "input"), z.toJSONSchema(p.input, jsonSchemaOptions("input")) as JsonSchema));
    Object.assign(out, componentSchemas(schemaName(p, "output"), z.toJSONSchema(p.output, jsonSchemaOptions("output")) as JsonSchema));
  }
  return out;
}

/** The token API's OpenAPI 3.1 document for the admin at `origin` (e.g. `https://admin.example.com`). */
export function openApiDocument(origin: string) {
  const procs = tokenProcedures();
  const metadata = `${origin}/.well-known/oauth-protected-resource/api/v1`;
  const errorResponses = Object.fromEntries(
    [false, true].flatMap((change) => (change ? CHANGE_ERRORS : READ_ERRORS).map((code) => [responseName(code, change), errorResponse(code, change)])),
  );
  return {
    openapi: "3.1.0",
    info: {
      title: "Commerce token API",
      version: "v1",
      description:
        'Every admin procedure a token may call, as `POST /api/v1/<router>/<procedure>` with `{"json": <input>}`, answering `{"json": <output>}`. ' +
        "A token acts for the member who made it, in that member's store only, with the member's role (read fresh on every call) intersected with the token's areas.",
    },
    servers: [{ url: origin }],
    tags: [...new Set(procs.map((p) => p.router))].map((name) => ({ name })),
    security: [{ bearer: [] }],
    paths: Object.fromEntries(procs.map((p) => [`/api/v1/${p.router}/${p.name}`, { post: operation(p) }])),
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description:
            "A created token (`wc_live_…`, made in the admin's Settings → MCP & API, shown once) or an OAuth access token (`wcat_…`) of a connected AI client. " +
            `OAuth clients find the authorization server through the protected-resource metadata at ${metadata} (RFC 9728). ` +
            `Area scopes: ${AREA_SCOPES.join(", ")}; \`<area>:write\` includes \`<area>:read\`.`,
        },
      },
      parameters: {
        [IDEMPOTENCY_HEADER]: {
          name: IDEMPOTENCY_HEADER,
          in: "header",
          required: false,
          description:
            `Makes a retried change safe: the same key with the same body answers the first answer again (with \`${REPLAYED_HEADER}: true\`) for ${KEY_LIFETIME_HOURS} hours. ` +
            `1 to ${KEY_MAX_LENGTH} printable ASCII characters (0x21-0x7E); a UUID is a good choice.`,
          schema: { type: "string", minLength: 1, maxLength: KEY_MAX_LENGTH, pattern: KEY_PATTERN },
        },
      },
      headers: {
        [POLICY_HEADER]: { description: 'The grant\'s limit: `"default";q=<calls>;w=<window seconds>`.', schema: { type: "string" } },
        [LIMIT_HEADER]: { description: 'What is left: `"default";r=<remaining>;t=<seconds until a call frees>`.', schema: { type: "string" } },
        "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer", minimum: 0 } },
        [REPLAYED_HEADER]: { description: `\`true\` when this is the stored answer of an earlier request with the same \`${IDEMPOTENCY_HEADER}\`.`, schema: { type: "string", enum: ["true"] } },
      },
      responses: {
        Proposed: {
          description:
            "An OAuth connection's change while the store's **Changes need approval** is on: nothing changed yet; the proposal waits in the admin's AI approvals.",
          headers: { ...rateLimitResponseHeaders(), [REPLAYED_HEADER]: ref(REPLAYED_HEADER, "headers") },
          content: { "application/json": { schema: envelope(ref("Proposal")) } },
        },
        ...errorResponses,
      },
      schemas: {
        Error: envelope(componentSchemas("Error", z.toJSONSchema(errorSchema, jsonSchemaOptions("output")) as JsonSchema).Error),
        ...componentSchemas("Proposal", z.toJSONSchema(proposedAnswerSchema, jsonSchemaOptions("output")) as JsonSchema),
        ...procedureSchemas(procs),
      },
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
