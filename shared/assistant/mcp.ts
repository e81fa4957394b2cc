import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Database } from "../db/database";
import { databaseUnavailable, isDatabaseUnavailable } from "../db/unavailable";
import { isAppError } from "../core/errors";
import { errorFields, type Logger } from "../core/log";
import { recordRead } from "../pipeline/activity";
import type { Caller, Principal } from "../pipeline/principal";
import { runRead } from "../pipeline/read";
import { callerBehind } from "../pipeline/refusal";
import { idempotencyKeyOf } from "../pipeline/idempotency-key";
import { runIdempotent } from "../pipeline/idempotent";
import { resolveCaller, type Outcome } from "../pipeline/run";
import { procedureKey, type Services } from "../procedures/define";
import { propose, proposalAnswer, proposalAnswerOutput } from "./approvals";
import { finishProposal, proposalCall, proposeInUnits, readProposal } from "./proposal-units";
import { TOOLS, visibleTools, type Tool } from "./tools";

/**
 * The MCP server of one request (stateless Streamable HTTP): the assistant's tools the caller may see,
 * each call run through the one pipeline for the caller's grant (SPEC "MCP tools"). Tool failures are
 * results with `isError` (the model can read and recover).
 */
export const SERVER_INFO = { name: "edge-commerce", version: "1.0.0" } as const;

export interface McpDeps {
  db: Database;
  principal: Principal;
  /** The principal as resolved for this POST: which tools it sees. Each call re-reads it in its own unit. */
  caller: Caller;
  log: Logger;
  /**
   * A tools/call request's arguments as the client sent them. The SDK hands its handler arguments it has
   * already parsed with the procedure's schema (transforms applied); the pipeline parses the originals.
   */
  argumentsOf(requestId: string | number): unknown;
  /** Work after the answer (the read-activity upsert). */
  defer: (work: () => Promise<unknown>) => void;
  /** The door's services a change may need (product images' bucket). */
  services?: Services;
  /** A tools/call the door began with the caller's opening (firstCall): its answer, by request id, made when the server calls it. */
  early?: { id: string | number; result: () => Promise<CallToolResult> } | undefined;
}

const servicesOf = (deps: Pick<McpDeps, "services">) => (deps.services ? { services: deps.services } : {});

/**
 * A tool's outputSchema (docs/api.md "Output schemas"): a read tool's is its procedure's output; a change
 * tool's is the proposal's answer (it proposes), whose `result` once approved is its procedure's output.
 * MCP wants an object: an answer that is not one (a list, a union) is wrapped as `{ result }`.
 */
export function toolOutput(tool: Tool): { schema: z.ZodObject; wrapped: boolean } {
  const schema = tool.kind === "read" ? tool.procedure.output : proposalAnswerOutput.extend({ result: tool.procedure.output.optional() });
  return schema instanceof z.ZodObject ? { schema, wrapped: false } : { schema: z.object({ result: schema }), wrapped: true };
}

/** An answer as text (its JSON, for clients before structured content) and, for a tool's answer, as structuredContent. */
export const toolText = (value: unknown, isError = false, tool?: Tool): CallToolResult => {
  const json = JSON.stringify(value);
  const structured = tool && json !== undefined ? (JSON.parse(json) as unknown) : undefined;
  return {
    content: [{ type: "text", text: json }],
    ...(structured !== undefined ? { structuredContent: (toolOutput(tool!).wrapped ? { result: structured } : structured) as Record<string, unknown> } : {}),
    ...(isError ? { isError: true } : {}),
  };
};

/**
 * A tool call's failure as a model reads it (MCP, the store's assistant): the error's code and words, never
 * its internals. An unknown error's message may name a failed query's values: it is logged (quietly,
 * errorFields) and the model gets a fixed text.
 */
export function toolFailure(log: Logger, toolName: string, e: unknown): { code: string; message: string; data?: unknown } {
  const known = isAppError(e) ? e : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
  if (known) return { code: known.code, message: known.message, ...(known.data ? { data: known.data } : {}) };
  log.error("Tool call failed", { tool: toolName, ...errorFields(e) });
  return { code: "INTERNAL", message: "Something went wrong on our side; this call changed nothing. Try again in a moment." };
}

/** A tool call's failure as an MCP result with `isError`. */
const failed = (deps: Pick<McpDeps, "log">, tool: Tool, e: unknown): CallToolResult => toolText(toolFailure(deps.log, tool.name, e), true);

function recordToolRead(deps: Pick<McpDeps, "db" | "defer">, tool: Tool, caller: Caller): void {
  const { store, grant } = caller;
  if (grant) deps.defer(() => recordRead(deps.db, { storeId: store.id, grantId: grant.id, procedure: procedureKey(tool.procedure), via: "mcp" }));
}

/** A tool call's outcome as the model reads it: a proposal's answer (an error when it failed), or the read's output. */
function answerOf(deps: Pick<McpDeps, "db" | "defer">, tool: Tool, outcome: Outcome): CallToolResult {
  if (outcome.kind === "proposed") {
    const answer = proposalAnswer(outcome.proposal);
    return toolText(answer, answer.status === "failed", tool);
  }
  recordToolRead(deps, tool, outcome.caller);
  return toolText(outcome.output, false, tool);
}

/** Where a tools/call request carries its Idempotency-Key (docs/decisions/0041-idempotency-keys.md): `params._meta`. */
export const IDEMPOTENCY_META = "idempotencyKey";

async function callTool(deps: McpDeps, tool: Tool, args: unknown, meta: Record<string, unknown> | undefined): Promise<CallToolResult> {
  const { db, principal, log, defer } = deps;
  try {
    const raw = meta?.[IDEMPOTENCY_META];
    const key = idempotencyKeyOf(raw === undefined ? undefined : typeof raw === "string" ? raw : "");
    // The POST's requests were counted together before any database work (workers/admin/mcp.ts).
    const options = { door: "mcp" as const, log, propose, proposeInUnits, defer, ...servicesOf(deps) };
    const done = await runIdempotent(db, principal, tool.procedure, args, options, key, (outcome) => ({ status: 200, json: JSON.stringify(answerOf(deps, tool, outcome)) }));
    const result = JSON.parse(done.answer.json) as CallToolResult;
    // A repeated call answers the first call's result, marked (over HTTP the header Idempotent-Replayed says it).
    return done.replayed ? { ...result, _meta: { ...result._meta, idempotentReplayed: true } } : result;
  } catch (e) {
    return failed(deps, tool, e);
  }
}

type Message = { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown; _meta?: Record<string, unknown> } };

/**
 * A POST whose requests are all tools/call, the first naming a read tool with a plan or a change tool
 * with a write plan: that call's first unit can carry the caller's opening, before the server is built
 * (a read in one round trip, a change in two, not one more each).
 */
export function firstCall(messages: readonly Message[]): { id: string | number; tool: Tool; args: unknown } | undefined {
  const requests = messages.filter((m) => typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number"));
  if (requests.length === 0 || requests.some((m) => m.method !== "tools/call")) return undefined;
  const first = requests[0]!;
  // A call with an Idempotency-Key looks its key up first (shared/pipeline/idempotent.ts): the server runs it.
  if (first.params?._meta?.[IDEMPOTENCY_META] !== undefined) return undefined;
  const tool = TOOLS.find((t) => t.name === first.params?.name);
  if (!tool || !(tool.kind === "read" ? tool.procedure.read : tool.procedure.write)) return undefined;
  return { id: first.id as string | number, tool, args: first.params?.arguments ?? {} };
}

/** A read's one unit, or a change's first: the caller, and the call's answer for when the server asks for it. */
async function begin(deps: Pick<McpDeps, "db" | "principal" | "log" | "defer" | "services">, tool: Tool, args: unknown, slug: string) {
  const { db, principal, log, defer } = deps;
  const proc = tool.procedure;
  if (tool.kind === "read") {
    if (!proc.read) throw new TypeError(`${tool.name} has no read plan`);
    const outcome = await runRead(db, principal, { ...proc, read: proc.read }, args, { door: "mcp", log, slug });
    recordToolRead(deps, tool, outcome.caller);
    const result = toolText(outcome.output, false, tool);
    return { caller: outcome.caller, result: () => Promise.resolve(result) };
  }
  if (!proc.write) throw new TypeError(`${tool.name} has no write plan`);
  const call = await proposalCall(db, principal, { ...proc, write: proc.write }, args, { door: "mcp", log, defer, ...servicesOf(deps) }, slug);
  const reading = await readProposal(call);
  // The second unit runs only if the server calls the tool (a tool this caller does not see is never called).
  const result = () => finishProposal(call, reading).then((outcome) => answerOf(deps, tool, outcome), (e: unknown) => failed(deps, tool, e));
  return { caller: reading.caller, result };
}

/**
 * Begins that first call. Answers the caller and the call's result, or the error when no caller was found
 * (an unknown, revoked or foreign token: the door answers 401 for the whole POST, as it would have).
 */
export async function runFirstCall(
  deps: Pick<McpDeps, "db" | "principal" | "log" | "defer" | "services">,
  call: { tool: Tool; args: unknown },
  slug: string,
): Promise<{ caller: Caller; result: () => Promise<CallToolResult> } | { error: unknown }> {
  try {
    return await begin(deps, call.tool, call.args, slug);
  } catch (e) {
    const answered = (caller: Caller) => {
      const result = failed(deps, call.tool, e);
      return { caller, result: () => Promise.resolve(result) };
    };
    const caller = callerBehind(e);
    if (caller) return answered(caller);
    // Failed before the caller was known. An unknown or foreign token is the POST's 401; anything else
    // (a value Postgres refused, an overload) is the call's error, once the caller is found on its own.
    if (isAppError(e) && e.code === "UNAUTHORIZED") return { error: e };
    try {
      return answered(await resolveCaller(deps.db, deps.principal, "mcp", slug));
    } catch (unresolved) {
      return { error: unresolved };
    }
  }
}

/** A new server per request (stateless), with the tools this caller may use registered. */
export function mcpServer(deps: McpDeps): McpServer {
  const { store } = deps.caller;
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: `Tools for the store "${store.name}" (${store.slug}). Money is in minor units of ${store.currency}. Change tools propose changes that a person approves.`,
  });
  for (const tool of visibleTools(deps.caller.permissions, store)) {
    const output = toolOutput(tool);
    server.registerTool(
      tool.name,
      {
        description: output.wrapped ? `${tool.description} Its answer is { "result": … }.` : tool.description,
        inputSchema: tool.procedure.input,
        outputSchema: output.schema,
        annotations: { readOnlyHint: tool.kind === "read", destructiveHint: false, openWorldHint: false },
      },
      (_parsed: unknown, extra: { requestId: string | number; _meta?: Record<string, unknown> }) =>
        deps.early && deps.early.id === extra.requestId ? deps.early.result() : callTool(deps, tool, deps.argumentsOf(extra.requestId), extra._meta),
    );
  }
  return server;
}
