import { z } from "zod";
import type { Database } from "../db/database";
import type { Logger } from "../core/log";
import type { ToolSpec } from "../model/protocol";
import type { Caller, Principal } from "../pipeline/principal";
import { runProcedure } from "../pipeline/run";
import type { Services } from "../procedures/define";
import { proposalAnswer, propose } from "./approvals";
import { toolFailure } from "./mcp";
import { visibleTools } from "./tools";

/**
 * The store's assistant calling its tools (issue 24 item 2): exactly the tools MCP lists for the member
 * (one registry, ./tools.ts), each call through the one pipeline at the `assistant` door: the signed-in
 * member, their role read in the call's own unit, the store's AI settings applied (customer details, whether
 * changes are allowed). A change tool never changes anything here: it stores a proposal (source `assistant`)
 * that the member approves or rejects in the conversation, whatever "Changes need approval" says (item 3).
 * What a call answers is data for the model (a tool message's JSON), never instructions.
 */

export interface AssistantCalls {
  db: Database;
  /** The member's session, as the admin door knows it. */
  principal: Principal;
  log: Logger;
  defer?: (work: () => Promise<unknown>) => void;
  services?: Services;
}

export interface ToolAnswer {
  /** The tool's output, a proposal's answer, or `{ code, message }` when it failed. */
  data: unknown;
  isError: boolean;
}

/** The tools this member may use now, in the model protocol's shape (name, words, JSON Schema of the input). */
export function assistantToolSpecs(caller: Caller): ToolSpec[] {
  return visibleTools(caller.permissions, caller.store).map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: z.toJSONSchema(t.procedure.input, { io: "input", unrepresentable: "any" }) as Record<string, unknown> },
  }));
}

/** Runs one tool call the model asked for; a tool the member may not use now answers as if it did not exist. */
export async function callAssistantTool(deps: AssistantCalls, caller: Caller, name: string, args: unknown): Promise<ToolAnswer> {
  const tool = visibleTools(caller.permissions, caller.store).find((t) => t.name === name);
  if (!tool) {
    return { data: { code: "NOT_FOUND", message: `There is no tool ${name} here: it does not exist, or your role or the store's AI settings leave it out.` }, isError: true };
  }
  try {
    const outcome = await runProcedure(deps.db, deps.principal, tool.procedure, args, {
      door: "assistant",
      log: deps.log,
      propose,
      ...(deps.defer ? { defer: deps.defer } : {}),
      ...(deps.services ? { services: deps.services } : {}),
    });
    if (outcome.kind === "proposed") {
      const answer = proposalAnswer(outcome.proposal);
      return { data: answer, isError: answer.status === "failed" };
    }
    return { data: outcome.output, isError: false };
  } catch (e) {
    return { data: toolFailure(deps.log, tool.name, e), isError: true };
  }
}
