import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { z } from "zod";
import { isAppError } from "#shared/core/errors";
import { errorFields, type Logger } from "#shared/core/log";
import { databaseUnavailable, isDatabaseUnavailable } from "#shared/db/unavailable";
import { canonicalJson, KEY_MAX_LENGTH, KEY_PATTERN } from "#shared/pipeline/idempotency-key";
import { UCP_SESSION_STATUSES } from "#shared/db/schema";
import { completeSession } from "#shared/ucp/checkout-complete";
import { askedOf, checkoutRequest, jsonPathOf } from "#shared/ucp/checkout-input";
import { cancelSession, createSession, getSession, replaceSession, sessionNotFound, type AlsoWrite, type SessionAnswer } from "#shared/ucp/checkout-sessions";
import type { StorefrontEnv } from "./context";
import { agentOf, codesRefusal, completeDeps, isRefusal, presented, sessionRefusal, withAgentKey, type Agent, type KeptAnswer, type UcpRefusal } from "./ucp-agent";
import { isUuid } from "#shared/db/ids";

/**
 * UCP checkout sessions as MCP tools on the Storefront MCP's endpoint (issue 26 item 3; docs/storefront-mcp.md
 * "UCP checkout tools"; the specification's MCP binding of the checkout capability): `create_checkout`,
 * `get_checkout`, `update_checkout`, `complete_checkout` and `cancel_checkout`, on the same session code as the
 * REST door (./ucp.ts) and the same transport-neutral pieces (./ucp-agent.ts): the agent named by
 * `meta["ucp-agent"].profile` (fetched and read, a request signature verified), `meta["idempotency-key"]`
 * with REST's semantics, the answer presented with absolute links and `continue_url`.
 *
 * The binding's two kinds of answer: a business outcome is a tool result whose `structuredContent` is the
 * checkout (or, for a session that does not exist for this agent at this store, the protocol's error
 * response with `not_found`), its JSON also as text; a protocol error (the agent's profile, a signature, the
 * arguments' shape, a reused key, a finished session, a limit) is a JSON-RPC error with the HTTP status,
 * `-32001` for discovery and `-32000` otherwise (`-32602` for arguments, `-32600` for a body's digest), its
 * `data` the protocol's `{code, content}`. The door (./storefront-mcp.ts) checks the arguments and the agent
 * before the SDK's server runs (`checkoutPreflight`), and turns a refusal the tool reported into that error.
 */

type McpContext = Context<StorefrontEnv>;

export const CHECKOUT_TOOLS = ["create_checkout", "get_checkout", "update_checkout", "complete_checkout", "cancel_checkout"] as const;
export type CheckoutTool = (typeof CHECKOUT_TOOLS)[number];
export const isCheckoutTool = (name: unknown): name is CheckoutTool => (CHECKOUT_TOOLS as readonly unknown[]).includes(name);


// ——— Arguments ———

const idempotencyKey = z
  .string()
  .min(1)
  .max(KEY_MAX_LENGTH)
  .regex(new RegExp(KEY_PATTERN), "use 1 to 255 visible ASCII characters, e.g. a UUID made for this request")
  .describe("A key made for this request (a UUID). Sent again with the same arguments it answers the first answer again; with other arguments it is refused (idempotency_conflict).");

const meta = (key: "required" | "optional") =>
  z
    .looseObject({
      "ucp-agent": z
        .looseObject({ profile: z.string().min(1).max(2048).describe("The https URL of your platform's UCP profile (its /.well-known/ucp).") })
        .describe("Who you are: your platform's profile, which the store fetches and reads. Your checkouts are yours: another agent cannot see them."),
      "idempotency-key": key === "required" ? idempotencyKey : idempotencyKey.optional(),
    })
    .describe(`UCP request metadata. "ucp-agent" is required${key === "required" ? ', and so is "idempotency-key"' : '; "idempotency-key" is optional'}.`);

const sessionId = z.string().min(1).max(200).describe("The checkout's id, as create_checkout answered it.");

/** The binding: the checkout object of a request never holds the id (the tool's `id` argument names it). */
const noId = z.never({ error: "must not be sent: name the checkout with the tool's id argument" }).optional();

const checkout = checkoutRequest
  .extend({ id: noId })
  .describe(
    "The checkout as you want it (update replaces it whole): line_items [{item: {id: a product_variant_id}, quantity}], buyer {email, first_name, last_name, phone_number}, " +
      "fulfillment.methods[{type: \"shipping\", destinations: [an Indian address: first_name, last_name, street_address, extended_address, address_locality, address_region (e.g. \"IN-MH\"), postal_code, address_country \"IN\"]}], discounts.codes.",
  );

const completing = z
  .looseObject({ id: noId })
  .describe("The checkout as you hold it. Its payment is not read: this store takes no delegated payment, the buyer pays on the store's own page (continue_url).");

const INPUTS = {
  create_checkout: z.object({ meta: meta("optional"), checkout }),
  get_checkout: z.object({ meta: meta("optional"), id: sessionId }),
  update_checkout: z.object({ meta: meta("optional"), id: sessionId, checkout }),
  complete_checkout: z.object({ meta: meta("required"), id: sessionId, checkout: completing.optional() }),
  cancel_checkout: z.object({ meta: meta("required"), id: sessionId }),
} satisfies Record<CheckoutTool, z.ZodType>;

type Input<T extends CheckoutTool> = z.infer<(typeof INPUTS)[T]>;

// ——— Answers ———

const money = z.looseObject({ type: z.string(), amount: z.number().int(), display_text: z.string().optional() });

/** The checkout (shopping/checkout.json with the fulfillment and discount extensions), or the protocol's error response. */
const checkoutAnswer = z
  .looseObject({
    ucp: z.looseObject({ version: z.string(), status: z.literal("error").optional() }),
    id: z.string().optional(),
    status: z.enum(UCP_SESSION_STATUSES).optional(),
    currency: z.string().optional(),
    line_items: z.array(z.looseObject({ id: z.string(), item: z.looseObject({ id: z.string(), title: z.string(), price: z.number().int() }), quantity: z.number().int() })).optional(),
    totals: z.array(money).optional().describe("Minor units (paise for INR). GST is included in subtotal; total's lines show it (Excl. GST, GST)."),
    messages: z
      .array(z.looseObject({ type: z.enum(["error", "warning", "info"]), code: z.string().optional(), content: z.string(), path: z.string().optional(), severity: z.string().optional() }))
      .optional()
      .describe("What is missing or wrong, each error with the JSONPath of its field; fix them with update_checkout."),
    continue_url: z.string().optional().describe("Where the buyer takes over in their browser: give it to them when status is requires_escalation (they pay there)."),
    order: z.looseObject({ id: z.string(), label: z.string(), permalink_url: z.string().optional() }).optional(),
    expires_at: z.string().optional(),
  })
  .describe("The checkout as UCP defines it; for an id that names no checkout of yours at this store, the protocol's error response (ucp.status \"error\", a not_found message).");

// ——— The door's part: arguments and agent before any tool runs ———

const refusal = (status: number, code: string, content: string): UcpRefusal => ({ status, code, content });

/** The arguments of a checkout tool's call, checked as the binding asks, or the protocol's refusal (400). */
export function checkoutArguments<T extends CheckoutTool>(tool: T, args: unknown): { input: Input<T>; profile: string } | UcpRefusal {
  const profile = (args as { meta?: { "ucp-agent"?: { profile?: unknown } } } | null | undefined)?.meta?.["ucp-agent"]?.profile;
  if (typeof profile !== "string" || profile === "") {
    return refusal(400, "invalid_profile_url", 'Send meta["ucp-agent"].profile: the URL of your platform\'s UCP profile, e.g. {"meta": {"ucp-agent": {"profile": "https://<your platform>/.well-known/ucp"}}}.');
  }
  const parsed = INPUTS[tool].safeParse(args ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return refusal(400, "invalid_request", `${jsonPathOf(issue.path)}: ${issue.message}`);
  }
  return { input: parsed.data as Input<T>, profile };
}

/** The `UCP-Agent` header value the REST door reads, for a profile URL sent in `meta` (a structured-field string). */
const agentHeader = (profile: string) => `profile="${profile.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;

/**
 * Before a checkout tool runs: its arguments, the agent (its profile fetched and read, a signature on the
 * request verified: ./ucp-agent.ts `agentOf`), and the discount codes of a create or update counted at the
 * discount door as REST counts them. Answers the agent, or the refusal the door sends as a JSON-RPC error.
 */
export async function checkoutPreflight(c: McpContext, tool: CheckoutTool, args: unknown): Promise<Agent | UcpRefusal> {
  const checked = checkoutArguments(tool, args);
  if (isRefusal(checked)) return checked;
  const agent = await agentOf(c, agentHeader(checked.profile));
  // The agent module speaks of REST's header; over MCP the URL came in meta.
  if (isRefusal(agent)) return agent.code === "invalid_profile_url" ? { ...agent, content: `meta["ucp-agent"].profile: ${agent.content}` } : agent;
  const codes = (checked.input as { checkout?: { discounts?: { codes?: string[] } } }).checkout?.discounts?.codes?.length ?? 0;
  return (await codesRefusal(c, codes)) ?? agent;
}

/** The JSON-RPC error of a refusal as UCP's MCP binding has it: `-32001` for discovery, `-32000` for the rest (and JSON-RPC's own where they fit), `data` the protocol's `{code, content}`. */
export function checkoutRpcErrorBody(id: unknown, r: UcpRefusal) {
  const discovery = ["invalid_profile_url", "profile_unreachable", "profile_malformed", "version_unsupported"].includes(r.code);
  const code = discovery ? -32001 : r.code === "invalid_request" ? -32602 : r.status >= 500 && r.status !== 503 ? -32603 : r.status === 400 || r.status === 413 ? -32600 : -32000;
  const retry = r.headers?.["retry-after"];
  const data = { code: r.code, content: r.content, ...(retry ? { retry_after: Number(retry) } : {}) };
  const rpcId = typeof id === "string" || typeof id === "number" ? id : null;
  return { jsonrpc: "2.0", id: rpcId, error: { code, message: r.content, data } };
}

/** A refusal as UCP's MCP binding answers it: the JSON-RPC error with the HTTP status. */
export function checkoutRpcError(id: unknown, r: UcpRefusal): Response {
  return Response.json(checkoutRpcErrorBody(id, r), { status: r.status, headers: { "cache-control": "no-store", ...(r.headers ?? {}) } });
}

/** A session that is not there (or the switch is off), as the binding answers it: a result holding the protocol's error response. */
export function notFoundRpcResult(id: unknown): Response {
  const rpcId = typeof id === "string" || typeof id === "number" ? id : null;
  return Response.json({ jsonrpc: "2.0", id: rpcId, result: resultOf({ status: 404, body: JSON.stringify(sessionNotFound()) }) }, { headers: { "cache-control": "no-store" } });
}

// ——— The tools ———

/** What the checkout tools need of the request: the door fills `agent` after `checkoutPreflight` and reads back a refusal or a replay. */
export interface CheckoutToolDeps {
  c: McpContext;
  log: Logger;
  agent?: Agent;
  /** A protocol refusal the door answers as a JSON-RPC error instead of the tool's result. */
  refuse: (r: UcpRefusal) => void;
  /** The answer is a replay of a kept one (the door marks it `Idempotent-Replayed`). */
  replayed: () => void;
}

/** A kept answer (REST's shape: status and body) as the tool's result: a checkout or not-found is a result; anything else is the door's error. */
function resultOf(kept: KeptAnswer, replayed = false): CallToolResult {
  return { content: [{ type: "text", text: kept.body }], structuredContent: JSON.parse(kept.body) as Record<string, unknown>, ...(replayed ? { _meta: { "idempotent-replayed": true } } : {}) };
}

const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const changes = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

/** The five checkout tools on the Storefront MCP's server (./storefront-mcp-tools.ts registers them with its own). */
export function registerCheckoutTools(server: McpServer, deps: CheckoutToolDeps): void {
  const { c } = deps;

  /** A session answer kept and answered as REST keeps it: 200 (201 for a new one) with the checkout, 404, or a refusal's `{code, content}`. */
  const keptOf = async (answer: SessionAnswer, created: boolean): Promise<KeptAnswer> => {
    if (answer.ok) return { status: created ? 201 : 200, body: JSON.stringify(await presented(c, answer)) };
    const why = sessionRefusal(answer.why);
    return why ? { status: why.status, body: JSON.stringify({ code: why.code, content: why.content }) } : { status: 404, body: JSON.stringify(sessionNotFound()) };
  };

  /** A kept answer as the tool's result; a protocol refusal goes to the door, which answers it as a JSON-RPC error. */
  const answered = (kept: KeptAnswer, replayed = false): CallToolResult => {
    if (kept.status < 300 || kept.status === 404) return resultOf(kept, replayed);
    const { code, content } = JSON.parse(kept.body) as { code: string; content: string };
    deps.refuse({ status: kept.status, code, content });
    return { content: [{ type: "text", text: kept.body }], isError: true };
  };

  /**
   * One operation of the session, with the agent's Idempotency-Key when it sent one (REST's semantics and
   * operations, ./ucp-agent.ts `withAgentKey`, over the canonical JSON of the arguments besides `meta`).
   */
  const operate = async (
    tool: CheckoutTool,
    o: { id?: string; key?: string | undefined; operation: string; request: unknown; created?: boolean },
    work: (agent: Agent, also?: AlsoWrite) => Promise<SessionAnswer>,
  ): Promise<CallToolResult> => {
    try {
      const agent = deps.agent;
      if (!agent) throw new Error(`${tool} ran without the door's preflight`);
      // An id that cannot be a session's names none (no database work), as over REST.
      if (o.id !== undefined && !isUuid(o.id)) return resultOf({ status: 404, body: JSON.stringify(sessionNotFound()) });
      if (o.key === undefined) return answered(await keptOf(await work(agent), o.created === true));
      const kept = await withAgentKey(c, { agent, key: o.key, operation: o.operation, request: canonicalJson(o.request) }, async (also) => keptOf(await work(agent, also), o.created === true), (k) => (k.status < 500 ? k : null));
      if (isRefusal(kept)) {
        deps.refuse(kept);
        return { content: [{ type: "text", text: JSON.stringify({ code: kept.code, content: kept.content }) }], isError: true };
      }
      if (kept.replayed) {
        deps.replayed();
        return answered(kept.answer, true);
      }
      return answered(kept.value);
    } catch (e) {
      const known = isAppError(e) ? e : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
      if (!known) deps.log.error("Storefront MCP tool failed", { tool, ...errorFields(e) });
      const busy = known?.status === 503;
      deps.refuse({
        status: busy ? 503 : 500,
        code: busy ? "service_unavailable" : "internal_error",
        content: busy ? known.message : "Something went wrong on our side; retry with the same idempotency-key.",
        ...(busy ? { headers: { "retry-after": "1" } } : {}),
      });
      return { content: [{ type: "text", text: "failed" }], isError: true };
    }
  };

  const db = c.var.db;
  const storeId = c.var.storeId;
  const escalation = "When status is requires_escalation, give the buyer continue_url: they pay on the store's own page (this store takes no delegated payment).";

  server.registerTool(
    "create_checkout",
    {
      title: "Create a UCP checkout",
      description:
        "Starts a checkout session at this store (UCP) with line items (item.id: a product_variant_id from get_product), and optionally the buyer's email and name and a shipping address in India. " +
        "Answers the checkout priced by the store (minor units, GST included) with messages naming each missing or wrong field by its path; fix them with update_checkout until status is ready_for_complete, " +
        "then complete_checkout. Requires meta[\"ucp-agent\"].profile; meta[\"idempotency-key\"] makes a retry safe.",
      inputSchema: INPUTS.create_checkout,
      outputSchema: checkoutAnswer,
      annotations: changes,
    },
    (input) =>
      operate("create_checkout", { key: input.meta["idempotency-key"], operation: "ucp.checkout.create", request: { checkout: input.checkout }, created: true }, (agent, also) =>
        createSession(db, storeId, agent.url, askedOf(input.checkout), also, c.var.hostname),
      ),
  );

  server.registerTool(
    "get_checkout",
    {
      title: "Get a UCP checkout",
      description:
        "A checkout session you created, as it is now: priced afresh, its status (incomplete, ready_for_complete, requires_escalation while the buyer has not paid, completed with its order once they have, canceled) " +
        `and its messages. ${escalation}`,
      inputSchema: INPUTS.get_checkout,
      outputSchema: checkoutAnswer,
      annotations: readOnly,
    },
    (input) => operate("get_checkout", { id: input.id, operation: "ucp.checkout.get", request: null }, (agent) => getSession(db, storeId, agent.url, input.id)),
  );

  server.registerTool(
    "update_checkout",
    {
      title: "Update a UCP checkout",
      description:
        "Replaces a checkout session you created with the checkout you send (whatever you leave out is cleared: send the whole checkout): line items, buyer, shipping address, discount codes. " +
        "Answers it priced afresh with its messages. A completed or canceled checkout, or one whose order was placed, cannot change (invalid_state).",
      inputSchema: INPUTS.update_checkout,
      outputSchema: checkoutAnswer,
      annotations: changes,
    },
    (input) =>
      operate("update_checkout", { id: input.id, key: input.meta["idempotency-key"], operation: `ucp.checkout.update ${input.id}`, request: { id: input.id, checkout: input.checkout } }, (agent, also) =>
        replaceSession(db, storeId, agent.url, input.id, askedOf(input.checkout), also),
      ),
  );

  server.registerTool(
    "complete_checkout",
    {
      title: "Complete a UCP checkout (place the order)",
      description:
        "Places the order of a checkout whose status is ready_for_complete: the store reserves the stock and the order waits for payment. The answer's status is requires_escalation with continue_url, the order's page: " +
        "give that link to the buyer, who pays there at the store's gateway; get_checkout answers completed, with the order's permalink_url, once they have paid. A checkout that is not ready answers its messages and places nothing. " +
        "Requires meta[\"idempotency-key\"]: a retry with the same key answers the same and never places a second order.",
      inputSchema: INPUTS.complete_checkout,
      outputSchema: checkoutAnswer,
      annotations: changes,
    },
    (input) =>
      operate("complete_checkout", { id: input.id, key: input.meta["idempotency-key"], operation: `ucp.checkout.complete ${input.id}`, request: { id: input.id, checkout: input.checkout ?? null } }, async (agent, also) =>
        completeSession(await completeDeps(c), agent, input.id, also),
      ),
  );

  server.registerTool(
    "cancel_checkout",
    {
      title: "Cancel a UCP checkout",
      description: "Cancels a checkout session you created; if its order waits for the buyer's payment, that order is cancelled and its items released. A completed or canceled checkout cannot be cancelled (invalid_state). Requires meta[\"idempotency-key\"].",
      inputSchema: INPUTS.cancel_checkout,
      outputSchema: checkoutAnswer,
      annotations: { ...changes, destructiveHint: true },
    },
    (input) =>
      operate("cancel_checkout", { id: input.id, key: input.meta["idempotency-key"], operation: `ucp.checkout.cancel ${input.id}`, request: { id: input.id } }, (agent, also) =>
        cancelSession(db, storeId, agent.url, input.id, also),
      ),
  );
}
