/**
 * A line diff for people who approve text they did not write: every removed and added line in full,
 * with a few unchanged lines around each change. Pure and bounded: the common head and tail are
 * trimmed first, the rest goes through Myers' O(ND) algorithm with a work budget, and past the budget
 * the changed middle is shown as all old lines removed and all new lines added (still complete).
 */
export type DiffOp = "same" | "removed" | "added";

export interface DiffLine {
  op: DiffOp;
  text: string;
}

/** A run of changed lines with their context; starts are 1-based line numbers in the old and new text. */
export interface Hunk {
  oldStart: number;
  newStart: number;
  lines: DiffLine[];
}

export interface DiffOptions {
  /** Unchanged lines shown before and after each change. */
  context?: number;
  /** Steps Myers may take (diagonals, snake moves and trace copies) before falling back. */
  maxWork?: number;
}

export const DEFAULT_CONTEXT = 3;
export const DEFAULT_MAX_WORK = 1_000_000;

/** The lines of a text; the empty text has none. */
export const linesOf = (text: string): string[] => (text === "" ? [] : text.split(/\r\n|\r|\n/));

/** The edit script of the middle (after trimming), or null when it would cost more than `maxWork`. */
function myers(a: readonly number[], b: readonly number[], maxWork: number): DiffOp[] | null {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let work = 0;
  let found = -1;
  for (let d = 0; d <= max && found < 0; d++) {
    // v over [-d, d] as it stood before step d: all that backtracking step d reads.
    trace.push(v.slice(off - d, off + d + 1));
    work += 2 * d + 1;
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1]! < v[off + k + 1]!) ? v[off + k + 1]! : v[off + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
        work++;
      }
      v[off + k] = x;
      work++;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (work > maxWork) return null;
  }
  const ops: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const snap = trace[d]!;
    const at = (k: number) => snap[k + d]!;
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("same");
      x--;
      y--;
    }
    ops.push(x === prevX ? "added" : "removed");
    x = prevX;
    y = prevY;
  }
  for (; x > 0; x--) ops.push("same");
  return ops.reverse();
}

/** Every line of both texts tagged same, removed or added, in reading order. */
export function diffLines(before: string, after: string, maxWork = DEFAULT_MAX_WORK): DiffLine[] {
  const a = linesOf(before);
  const b = linesOf(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const midA = a.slice(head, a.length - tail);
  const midB = b.slice(head, b.length - tail);
  // Compare numbers, not strings: one id per distinct line.
  const ids = new Map<string, number>();
  const idOf = (line: string) => ids.get(line) ?? ids.set(line, ids.size).get(line)!;
  const ops =
    (midA.length && midB.length ? myers(midA.map(idOf), midB.map(idOf), maxWork) : null) ??
    [...midA.map((): DiffOp => "removed"), ...midB.map((): DiffOp => "added")];
  const out: DiffLine[] = a.slice(0, head).map((text) => ({ op: "same", text }));
  let i = 0;
  let j = 0;
  for (const op of ops) {
    if (op === "added") out.push({ op, text: midB[j++]! });
    else {
      out.push({ op, text: midA[i++]! });
      if (op === "same") j++;
    }
  }
  for (const text of a.slice(a.length - tail)) out.push({ op: "same", text });
  return out;
}

/** The changes of `before` → `after` as hunks with `context` unchanged lines around; [] when nothing changed. */
export function lineDiff(before: string, after: string, options: DiffOptions = {}): Hunk[] {
  const context = options.context ?? DEFAULT_CONTEXT;
  const all = diffLines(before, after, options.maxWork);
  const shown = new Uint8Array(all.length);
  all.forEach((line, i) => {
    if (line.op !== "same") shown.fill(1, Math.max(0, i - context), i + context + 1);
  });
  const hunks: Hunk[] = [];
  let oldLine = 1;
  let newLine = 1;
  all.forEach((line, i) => {
    if (shown[i]) {
      if (!shown[i - 1]) hunks.push({ oldStart: oldLine, newStart: newLine, lines: [] });
      hunks[hunks.length - 1]!.lines.push(line);
    }
    if (line.op !== "added") oldLine++;
    if (line.op !== "removed") newLine++;
  });
  return hunks;
}
