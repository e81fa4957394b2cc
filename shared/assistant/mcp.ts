import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { recordRead, recordWrite, runAsPrincipal, type ApiPrincipal } from "../api/execute";
import type { Database } from "../db/database";
import { isAppError } from "../http/errors";
import type { Logger } from "../log";
import { procedureKey } from "../procedures/define";
import { parseInput } from "../procedures/execute";
import { propose } from "./approvals";
import { permissionOf, visibleTools, type Tool } from "./tools";

/**
 * The MCP server of one request (stateless Streamable HTTP): the assistant's tools the caller may see,
 * each run through the procedure registry for the caller's grant (SPEC "MCP tools").
 * Tool failures are results with `isError` (the model can read and recover); protocol problems
 * (an unknown tool, a bad request) are JSON-RPC errors.
 */
export const SERVER_INFO = { name: "edge-commerce", version: "1.0.0" } as const;

export interface McpDeps {
  db: Database;
  principal: ApiPrincipal;
  log: Logger;
  /** Work after the answer (the read-activity upsert). */
  defer: (work: Promise<unknown>) => void;
}

const text = (value: unknown, isError = false): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value) }],
  ...(isError ? { isError: true } : {}),
});

export function toolDescriptor(tool: Tool) {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.procedure.input, { io: "input", unrepresentable: "any" }) as { type: "object"; [k: string]: unknown },
    annotations: { readOnlyHint: tool.kind === "read", destructiveHint: false, openWorldHint: false },
  };
}

async function callTool(deps: McpDeps, tool: Tool, args: unknown): Promise<CallToolResult> {
  const { db, principal, log } = deps;
  const key = procedureKey(tool.procedure);
  if (tool.kind === "read") {
    if (tool.customerDetails && !principal.store.mcpReadCustomerDetails) {
      return text({ code: "FORBIDDEN", message: "Blocked: this store does not let AI clients read customer details. An Owner or Admin can allow it in Settings → MCP & API." }, true);
    }
    const output = await runAsPrincipal(db, principal, { via: "mcp", log, mutates: false }, (ctx) => tool.procedure.run(ctx, parseInput(tool.procedure, args)));
    deps.defer(recordRead(db, { storeId: principal.store.id, grantId: principal.grantId, procedure: key, via: "mcp" }));
    return text(output);
  }
  const { approval } = await runAsPrincipal(db, principal, { via: "mcp", log, mutates: true }, async (ctx) => {
    const made = await propose(ctx, tool, args, principal.grantId);
    await recordWrite(ctx.tx, principal.grantId, key, "mcp");
    return made;
  });
  const base = { approvalId: approval.id, status: approval.state, summary: approval.summary, diff: approval.diff };
  if (approval.state === "pending") {
    return text({ ...base, expiresAt: approval.expiresAt, next: "Waiting for the member who connected this client to approve it in the admin (AI approvals). Nothing has changed yet." });
  }
  return approval.state === "approved" ? text({ ...base, result: approval.result }) : text({ ...base, error: approval.error }, true);
}

export function mcpServer(deps: McpDeps): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions: `Tools for the store "${deps.principal.store.name}" (${deps.principal.store.slug}). Money is in minor units of ${deps.principal.store.currency}. Change tools propose changes that a person approves.`,
  });
  const tools = visibleTools(deps.principal.permissions, deps.principal.store);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(toolDescriptor) }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = tools.find((t) => t.name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}. Call tools/list for the tools this connection may use.`);
    if (!deps.principal.permissions.has(permissionOf(tool))) throw new McpError(ErrorCode.InvalidParams, `Tool ${tool.name} is not available.`);
    try {
      return await callTool(deps, tool, request.params.arguments ?? {});
    } catch (e) {
      if (isAppError(e)) return text({ code: e.code, message: e.message, ...(e.data ? { data: e.data } : {}) }, true);
      throw e;
    }
  });
  return server;
}
