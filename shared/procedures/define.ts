import type { z } from "zod";
import type { Permission } from "../auth/permissions";
import type { Database } from "../db/database";
import type { AppWebhookConfig } from "../apps/secrets";
import type { UcpSigningConfig } from "../ucp/store-keys";
import type { MediaService } from "../media/store";
import type { PaymentGateway } from "../payments/gateway";
import type { Courier } from "../shipping/courier";
import type { RoleName } from "../db/schema";
import type { StoreTx } from "../db/with-store";
import type { Logger } from "../core/log";
import { mapPlan, type Plan } from "../db/plan";
import type { Q, StatementClient } from "../db/steps";
import { runPlanOn } from "../db/unit";
import { unstorableIssue } from "../core/storable";
import { changeOn, readOn } from "../db/with-store";
import { txScope, type MemberInfo, type Scope, type StoreInfo } from "./scope";
import { checkOutput, type OutputSchema } from "./outputs";

/**
 * The procedure registry's building blocks (ARCHITECTURE §5). Each admin procedure is declared once,
 * with a zod input, an output type and exactly one kind of access:
 *   - a required Permission: runs inside the caller's store, for callers whose permissions include it;
 *   - "none": runs inside the caller's store for any member (e.g. staff.me); refused for tokens;
 *   - "session": needs a signed-in person, not a store (account, store picking); refused for tokens.
 * The same declarations serve /api/rpc (sessions), /api/v1 (tokens) and the AI assistant's tools.
 */

/** How the caller reached the procedure. */
export type Via = "session" | "token" | "mcp";

export type { MemberInfo, StoreInfo } from "./scope";

/**
 * Side effects outside Postgres that a door provides (they need the Worker's bindings). Optional: a
 * procedure must work without them, and the database stays the authority either way.
 */
export interface Services {
  /** Deletes an OAuth connection's tokens at the authorization server (KV). */
  revokeOAuthTokens?(grant: { storeSlug: string; memberId: string; apiGrantId: string }): Promise<void>;
  /** Overwrites the storefront's HOSTS cache entries of these hostnames (null: serves no store). */
  hostsChanged?(entries: { hostname: string; storeId: string | null }[]): Promise<void>;
  /** The store's payment gateway (refunds go back through it), from the Worker's configuration. */
  gateway?(storeId: string): Promise<PaymentGateway>;
  /** The store's courier (booking a shipment), from the Worker's configuration. */
  courier?(storeId: string): Promise<Courier>;
  /** App webhooks' root secret and URL policy (apps.create and apps.rotateSecret show a secret), from the Worker's configuration. */
  appWebhooks?(): AppWebhookConfig;
  /** The root the stores' UCP signing keys are sealed under (salesChannels: a new key's private half), from the Worker's configuration. */
  ucpSigning?(): UcpSigningConfig;
  /** Product images' bucket (R2 `MEDIA`) and whether image URLs may be local, from the Worker's bindings. */
  media?(): MediaService;
}

/** What a store procedure runs with: one transaction scoped to one store (RLS), and who is calling. */
export interface StoreContext {
  tx: StoreTx;
  store: StoreInfo;
  member: MemberInfo;
  /** The caller's effective permissions: the role's, capped by a grant's areas for API callers. */
  permissions: ReadonlySet<Permission>;
  via: Via;
  /**
   * True when the store's AI-client settings bind this call (an OAuth connection at any door, anything
   * over MCP): e.g. searches then leave out contact fields unless the store lets AI clients read them.
   */
  aiClient: boolean;
  log: Logger;
  services?: Services;
}

export interface SessionInfo {
  idHash: string;
  userId: string;
  email: string;
  name: string | null;
  activeStoreId: string | null;
}

export interface SessionContext {
  db: Database;
  session: SessionInfo;
  log: Logger;
  /** The person's membership in a store, read inside that store; the 'no store' errors when there is none. */
  membershipIn(storeId: string): Promise<{ store: StoreInfo; member: MemberInfo }>;
}

interface Common<I extends z.ZodType, O> {
  router: string;
  name: string;
  /** One or two sentences a merchant or an LLM can act on. */
  description: string;
  input: I;
  /**
   * The answer as the doors send it: the JSON of what the procedure answers (Dates as ISO 8601 text,
   * `undefined` fields left out; ./outputs.ts). The OpenAPI document and MCP tools' outputSchema are made
   * from it (zod's JSON Schema, io "output"); tests check every answer against it, production does not.
   */
  output: OutputSchema<NoInfer<O>>;
}

export interface StoreProcedure<I extends z.ZodType = z.ZodType, O = unknown> extends Common<I, O> {
  access: Permission | "none";
  /** True when the procedure changes something (it emits an outbox event in the same transaction). */
  mutates: boolean;
  /** Reads customers' contact details: AI clients get it only while the store allows it (SPEC "Store settings"). */
  customerDetails?: true;
  run(ctx: StoreContext, input: z.output<I>): Promise<O>;
  /**
   * A read as one plan, built before anything is sent: the doors send it with the caller's opening in
   * one round trip (shared/pipeline/run.ts). `run` is derived from it: the same statements, on an open
   * transaction.
   */
  read?(q: Q, scope: Scope, input: z.output<I>): Plan<O>;
  /**
   * A change in at most two round trips (shared/pipeline/write.ts): `prepare` reads what a decision needs
   * (first trip, after the caller's opening), `apply` is the change as guarded statements (second trip;
   * the only one when there is nothing to prepare). `run` is derived from it.
   */
  write?: WritePlan<z.output<I>, O>;
}

/** A change's plans. `apply` names the type of what `prepare` answers on its own parameter (methods are bivariant). */
export interface WritePlan<I, O, P = unknown> {
  /**
   * Also what the change makes in TypeScript before its unit with the door's services (a secret answered
   * once, of which the unit stores only a hash); its answer may be a promise, whose value `apply` gets.
   */
  prepare?(q: Q, scope: Scope, input: I, services: Services): Plan<P | Promise<P>>;
  /**
   * Between the two units, outside Postgres (a courier's booking): what `apply` gets instead of `prepare`'s
   * answer. It must be safe to repeat, since a lost race runs prepare, decide and apply again (with
   * `claim`: it runs once, given the claim's answer).
   */
  decide?(prepared: P, services: Services, input: I, storeId: string): Promise<unknown>;
  /**
   * Instead of `prepare`, a first unit that WRITES: what an outside call must find committed before it is
   * made (a refund's rows, whose ids are the gateway's idempotency keys). The claim and `decide` run once:
   * a lost race in `apply` never runs them again; `reread` reads what `apply` decides from again (one
   * read-only unit, given what `decide` answered; its answer replaces it) and `apply` is sent again. Only
   * doors where a change runs at once (a session, a created token; the AI approval runner's `run`): the
   * proposal units know `prepare` only.
   */
  claim?(q: Q, scope: Scope, input: I): Plan<P>;
  reread?(q: Q, scope: Scope, input: I, decided: unknown): Plan<unknown>;
  apply(q: Q, scope: Scope, input: I, prepared: P): Plan<O>;
  /**
   * Work outside Postgres once the change has committed (a KV entry, an OAuth provider's tokens), with
   * the door's services. Never a reason to fail the committed change: it logs and goes on.
   */
  after?(output: O, services: Services, input: I): Promise<void>;
}

/** A store procedure as declared: a read plan, a write plan, or a `run` on the store's transaction. */
export type StoreProcedureDef<I extends z.ZodType, O> = Omit<StoreProcedure<I, O>, "run" | "read" | "write"> &
  (
    | { read(q: Q, scope: Scope, input: z.output<I>): Plan<O>; run?: never; write?: never }
    | { write: WritePlan<z.output<I>, O>; run?: never; read?: never }
    | { run(ctx: StoreContext, input: z.output<I>): Promise<O>; read?: never; write?: never }
  );

export interface SessionProcedure<I extends z.ZodType = z.ZodType, O = unknown> extends Common<I, O> {
  access: "session";
  mutates: boolean;
  run(ctx: SessionContext, input: z.output<I>): Promise<O>;
}

export type Procedure = StoreProcedure | SessionProcedure;

const NAME = /^[a-z][A-Za-z]{1,40}$/;

function checkNames(router: string, name: string): void {
  if (!NAME.test(router) || !NAME.test(name)) throw new Error(`Bad procedure name ${router}.${name}`);
}

/**
 * A store procedure. Its read plan's answer, its write plan's `apply` answer and its `run`'s answer pass
 * through checkOutput (./outputs.ts): a no-op unless tests switched the check on.
 */
export function storeProcedure<I extends z.ZodType, O>(def: StoreProcedureDef<I, O>): StoreProcedure<I, O> {
  checkNames(def.router, def.name);
  const checked = (answer: O) => checkOutput(def, answer);
  if (def.read) {
    if (def.mutates) throw new Error(`${def.router}.${def.name}: a read plan cannot change anything`);
    const plain = def.read;
    const read = (q: Q, scope: Scope, input: z.output<I>) => mapPlan(plain(q, scope, input), checked);
    return { ...def, read, run: (ctx, input) => runPlanOn(ctx.tx.$client as unknown as StatementClient, (q) => read(q, txScope(ctx), input)) };
  }
  if (def.write) {
    if (!def.mutates) throw new Error(`${def.router}.${def.name}: a write plan must be declared as changing something`);
    const plain = def.write.apply;
    const write: WritePlan<z.output<I>, O> = { ...def.write, apply: (q, scope, input, prepared) => mapPlan(plain(q, scope, input, prepared), checked) };
    return { ...def, write, run: (ctx, input) => runWriteOn(ctx, write, input) };
  }
  const run = def.run!;
  return { ...def, run: async (ctx, input) => checked(await run(ctx, input)) } as StoreProcedure<I, O>;
}

/**
 * A write plan on the store's open transaction (tests, the AI approval runner): both plans, one after the
 * other (a claim's locks hold until the end, so `apply` finds what the claim read).
 */
async function runWriteOn<I, O>(ctx: StoreContext, write: WritePlan<I, O>, input: I): Promise<O> {
  const scope = txScope(ctx);
  const read = write.claim
    ? await changeOn(ctx.tx, (q) => write.claim!(q, scope, input))
    : write.prepare
      ? await readOn(ctx.tx, (q) => write.prepare!(q, scope, input, ctx.services ?? {}))
      : undefined;
  const prepared = write.decide ? await write.decide(read, ctx.services ?? {}, input, ctx.store.id) : read;
  const output = await changeOn(ctx.tx, (q) => write.apply(q, scope, input, prepared));
  if (write.after && ctx.services) await write.after(output, ctx.services, input);
  return output;
}

/** A session procedure; its answer passes through checkOutput like a store procedure's. */
export function sessionProcedure<I extends z.ZodType, O>(def: Omit<SessionProcedure<I, O>, "access">): SessionProcedure<I, O> {
  checkNames(def.router, def.name);
  const run = def.run;
  return { ...def, access: "session", run: async (ctx, input) => checkOutput(def, await run(ctx, input)) };
}

export const procedureKey = (p: { router: string; name: string }) => `${p.router}.${p.name}`;

/** A procedure's input as parsed, or its issues (paths as zod gives them). */
export type ParsedInput<T> = { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };

/**
 * A procedure's input as every door parses it (no input given is `{}`): first what no input may carry
 * (text Postgres cannot hold, nesting past the limit: shared/core/storable.ts), then its zod schema.
 */
export function parseProcedureInput<I extends z.ZodType>(proc: { input: I }, raw: unknown): ParsedInput<z.output<I>> {
  const value = raw === undefined ? {} : raw;
  const unstorable = unstorableIssue(value);
  if (unstorable) return { success: false, error: { issues: [{ path: unstorable.path ? [unstorable.path] : [], message: unstorable.message }] } };
  return proc.input.safeParse(value);
}

export function isSessionProcedure(p: Procedure): p is SessionProcedure {
  return p.access === "session";
}
