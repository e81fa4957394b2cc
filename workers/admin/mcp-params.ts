import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from "@modelcontextprotocol/sdk/types.js";

/**
 * The params of the JSON-RPC requests this server answers, checked at the door (docs/decisions/
 * 0023-inputs-at-the-door.md). The SDK parses a request against its method's schema inside the handler
 * and answers a failure as -32603 Internal error with zod's issues as the message; a client's mistake is
 * -32602 Invalid params (JSON-RPC 2.0 §5.1), said so a person can fix the call.
 */
const REQUEST_SCHEMAS: Readonly<Record<string, { safeParse(value: unknown): { success: boolean; error?: { issues: readonly { path: readonly PropertyKey[]; message: string }[] } } }>> = {
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "tools/call": CallToolRequestSchema,
};

/** What each method's params look like, for the error's message. */
const SHAPES: Readonly<Record<string, string>> = {
  "tools/call": 'params {"name": "<tool>", "arguments": {<the tool\'s fields>}} (arguments an object, or left out)',
  "tools/list": 'params {"cursor": "<from the last page>"} or none',
};

export interface JsonRpcErrorAnswer {
  jsonrpc: "2.0";
  id: string | number;
  error: { code: number; message: string };
}

/** The error answer for a request whose params its method's schema refuses, or undefined. */
export function invalidParams(message: { id?: unknown; method?: unknown }): JsonRpcErrorAnswer | undefined {
  const { id, method } = message;
  if (typeof method !== "string" || (typeof id !== "string" && typeof id !== "number")) return undefined;
  const schema = REQUEST_SCHEMAS[method];
  const parsed = schema?.safeParse(message);
  if (!parsed || parsed.success) return undefined;
  const issues = (parsed.error?.issues ?? []).slice(0, 3).map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message.replace(/^Invalid input: /, "")}`);
  const shape = SHAPES[method] ? ` ${method} takes ${SHAPES[method]}.` : "";
  return { jsonrpc: "2.0", id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${issues.join("; ")}.${shape}` } };
}
