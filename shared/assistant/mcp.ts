import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Database } from "../db/database";
import { databaseUnavailable, isDatabaseUnavailable } from "../db/unavailable";
import { isAppError } from "../http/errors";
import { errorFields, type Logger } from "../log";
import { recordRead } from "../pipeline/activity";
import type { Caller, Principal } from "../pipeline/principal";
import { runProcedure } from "../pipeline/run";
import { procedureKey } from "../procedures/define";
import { propose, proposalAnswer } from "./approvals";
import { visibleTools, type Tool } from "./tools";

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
  defer: (work: Promise<unknown>) => void;
}

const text = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : {}),
});

async function callTool(deps: McpDeps, tool: Tool, args: unknown): Promise<CallToolResult> {
  const { db, principal, log } = deps;
  try {
    // The POST's requests were counted together before any database work (workers/admin/mcp.ts).
    const outcome = await runProcedure(db, principal, tool.procedure, args, { door: "mcp", log, propose });
    if (outcome.kind === "proposed") {
      const answer = proposalAnswer(outcome.proposal);
      return text(answer, answer.status === "failed");
    }
    const { store, grant } = outcome.caller;
    if (grant) deps.defer(recordRead(db, { storeId: store.id, grantId: grant.id, procedure: procedureKey(tool.procedure), via: "mcp" }));
    return text(outcome.output);
  } catch (e) {
    const known = isAppError(e) ? e : isDatabaseUnavailable(e) ? databaseUnavailable() : undefined;
    if (known) return text({ code: known.code, message: known.message, ...(known.data ? { data: known.data } : {}) }, true);
    // The SDK would hand an unknown error's message to the client, and a failed query's message names
    // its values: log it (quietly, errorFields) and answer a fixed text.
    log.error("Tool call failed", { tool: tool.name, ...errorFields(e) });
    return text({ code: "INTERNAL", message: "Something went wrong on our side; this call changed nothing. Try again in a moment." }, true);
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
    server.registerTool(
      tool.name,
      {
        description: tool.description,
        inputSchema: tool.procedure.input,
        annotations: { readOnlyHint: tool.kind === "read", destructiveHint: false, openWorldHint: false },
      },
      (_parsed: unknown, extra: { requestId: string | number }) => callTool(deps, tool, deps.argumentsOf(extra.requestId)),
    );
  }
  return server;
}
