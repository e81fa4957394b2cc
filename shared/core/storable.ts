import { badRequest, type FieldIssue } from "./errors";

/**
 * What any door checks of a value it read (a JSON body, a form, a query, a path) before anything else
 * (docs/decisions/0023-inputs-at-the-door.md): no text Postgres cannot hold (a NUL character: text and
 * jsonb both refuse it, and the refusal would come back as a server error), and no nesting deeper than
 * MAX_INPUT_DEPTH (no input of ours is deeper; a deeper one would overflow the stack of whoever walks it,
 * JSON.stringify on its way to a jsonb column among them).
 */
export const MAX_INPUT_DEPTH = 32;

export const NUL_MESSAGE = "contains a NUL character (\\u0000), which cannot be stored; remove it";

/** True when `text` holds a character Postgres text cannot hold. */
export const hasUnstorableText = (text: string): boolean => text.includes("\u0000");

const join = (path: string, key: string | number) => (path ? `${path}.${key}` : String(key));

/** The first problem of `value` as a 400's field issue (its path from the value's root), or undefined. */
export function unstorableIssue(value: unknown, root = ""): FieldIssue | undefined {
  // Iterative, so a value too deep for the stack is walked only as far as the limit.
  const stack: [unknown, string, number][] = [[value, root, 0]];
  while (stack.length > 0) {
    const [v, path, depth] = stack.pop()!;
    if (typeof v === "string") {
      if (hasUnstorableText(v)) return { path, message: NUL_MESSAGE };
      continue;
    }
    if (typeof v !== "object" || v === null) continue;
    if (depth >= MAX_INPUT_DEPTH) return { path, message: `is nested deeper than ${MAX_INPUT_DEPTH} levels` };
    const entries: [string | number, unknown][] = Array.isArray(v) ? v.map((item, i) => [i, item]) : Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i]!;
      if (typeof key === "string" && hasUnstorableText(key)) return { path: join(path, key.replaceAll("\u0000", "\\u0000")), message: `a name ${NUL_MESSAGE}` };
      stack.push([item, join(path, key), depth + 1]);
    }
  }
  return undefined;
}

/** Throws the 400 naming the first problem of `value` (see unstorableIssue). */
export function refuseUnstorable(value: unknown, root = ""): void {
  const issue = unstorableIssue(value, root);
  if (issue) throw badRequest([issue]);
}
