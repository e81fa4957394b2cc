import { z } from "zod";

/**
 * Procedures' outputs (docs/api.md "Output schemas"). Every procedure declares its answer with zod as the
 * doors send it: the JSON text of what `run`, a read plan or a write plan's `apply` answer (a Date is its
 * ISO 8601 text, an `undefined` field is left out). The OpenAPI document and the MCP tools' `outputSchema`
 * are made from these schemas; tests check every answer against them (`checkOutputs`), production does not.
 */

/** A value as JSON.stringify sends it: Dates as their text, functions and `undefined` fields left out. */
export type JsonOf<T> = T extends Date
  ? string
  : T extends { toJSON(): infer J }
    ? JsonOf<J>
    : T extends readonly (infer E)[]
      ? JsonOf<E>[]
      : T extends object
        ? { [K in keyof T as T[K] extends (...args: never[]) => unknown ? never : K]: JsonOf<T[K]> }
        : T;

/** An output schema: it describes the JSON of the answer of type O. */
export type OutputSchema<O> = z.ZodType<JsonOf<O>>;

// ---- Pieces every area shares ----

/** An instant (a timestamptz, a Date in TypeScript) as JSON sends it: ISO 8601 in UTC, `2026-11-26T15:12:26.000Z`. */
export const instant = z.iso.datetime({ offset: true });
/** A calendar date, `2026-11-26`. */
export const day = z.iso.date();
/** A row id: a UUID. */
export const id = z.string();
/** An amount in the currency's minor unit (paise): a whole number. */
export const minor = z.number().int();
/** What a delete answers: the row's id and that it went. */
export const deleted = z.object({ id, deleted: z.boolean() });
/** A stored image as an answer names it (its variants' files are made from the hash and widths). */
export const imageOutput = z.object({ hash: z.string(), width: z.number().int(), height: z.number().int(), widths: z.array(z.number().int()), alt: z.string() });

/** A page of a list (shared/procedures/paging.ts `Paged`). */
export function paged<T extends z.ZodType>(item: T) {
  return z.object({
    items: z.array(item),
    page: z.number().int(),
    pageSize: z.number().int(),
    total: z.number().int(),
    totalCapped: z.literal(true).optional(),
  });
}

// ---- The check, on in tests ----

let checking = false;

/** Tests switch the check on (vitest's setup file); production leaves it off. */
export function checkOutputs(on: boolean): void {
  checking = on;
}

export function outputsChecked(): boolean {
  return checking;
}

/**
 * `answer` as the door would send it, parsed by the procedure's output schema; throws naming the procedure
 * and zod's issues when they disagree, or the fields the answer has and the schema does not declare (the
 * OpenAPI document would not show them). Answers `answer` itself (unchanged) either way.
 */
export function checkOutput<O>(proc: { router: string; name: string; output: z.ZodType }, answer: O): O {
  if (!checking) return answer;
  const json = answer === undefined ? undefined : (JSON.parse(JSON.stringify(answer)) as unknown);
  const parsed = proc.output.safeParse(json);
  const issues = parsed.success
    ? undeclared(json, parsed.data).map((path) => `${path}: a field the schema does not declare`)
    : parsed.error.issues.map((i) => `${i.path.length ? i.path.join(".") : "(answer)"}: ${i.message}`);
  if (issues.length) throw new Error(`${proc.router}.${proc.name} answered outside its output schema: ${issues.join("; ")}`);
  return answer;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The fields of `sent` that parsing dropped (z.object strips what it does not declare): the schema misses them. */
function undeclared(sent: unknown, parsed: unknown, path = ""): string[] {
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (Array.isArray(sent) && Array.isArray(parsed)) return sent.flatMap((v, i) => undeclared(v, parsed[i], at(i)));
  if (!isRecord(sent) || !isRecord(parsed)) return [];
  return Object.keys(sent).flatMap((k) => (k in parsed ? undeclared(sent[k], parsed[k], at(k)) : [at(k)]));
}
