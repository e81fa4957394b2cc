import type { Change, Shown, TextChange } from "#shared/assistant/changes";
import { linesOf, type DiffLine, type Hunk } from "#shared/assistant/diff";

/**
 * A proposal's changes as the approver reads them: one table row per field (before, after) and a
 * line diff for long text. Everything is shown in full, as text (it is model-written: never markup),
 * and marked in words as well as colour.
 */

/** A value as text: nothing as a dash; strings keep their spaces and line breaks (the cell wraps them). */
function Value({ v }: { v: Shown }) {
  if (v === null) return <span class="muted">—</span>;
  return <>{String(v)}</>;
}

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

const SIGN = { same: " ", removed: "−", added: "+" } as const;

/** One line: its sign for the eye, the words "removed"/"added" for a screen reader, its text as text. */
function Line({ line }: { line: DiffLine }) {
  const body = (
    <>
      <span class="sign" aria-hidden="true">
        {SIGN[line.op]}
      </span>
      {line.op === "same" ? null : <span class="sr-only">{`${line.op}: `}</span>}
      {line.text}
    </>
  );
  if (line.op === "removed") return <del class="ln">{body}</del>;
  if (line.op === "added") return <ins class="ln">{body}</ins>;
  return <span class="ln">{body}</span>;
}

/** Lines of the current text a hunk covers. */
const oldCount = (h: Hunk) => h.lines.filter((l) => l.op !== "added").length;

function Gap({ lines }: { lines: number }) {
  return lines > 0 ? <p class="gap">{`… ${plural(lines, "unchanged line")} …`}</p> : null;
}

function LineDiff({ change }: { change: TextChange }) {
  const all = change.hunks.flatMap((h) => h.lines);
  const removed = all.filter((l) => l.op === "removed").length;
  const added = all.filter((l) => l.op === "added").length;
  const total = linesOf(change.from).length;
  const last = change.hunks[change.hunks.length - 1];
  return (
    <div class="linediff">
      <p class="muted">{`${plural(removed, "line")} removed, ${plural(added, "line")} added. Line numbers are those of the current text.`}</p>
      {change.hunks.map((h, i) => {
        const prev = change.hunks[i - 1];
        return (
          <>
            <Gap lines={prev ? h.oldStart - (prev.oldStart + oldCount(prev)) : h.oldStart - 1} />
            <p class="where">{`Line ${h.oldStart}`}</p>
            <pre aria-label={`${change.label}, from line ${h.oldStart}`}>
              {h.lines.map((line) => (
                <Line line={line} />
              ))}
            </pre>
          </>
        );
      })}
      {last ? <Gap lines={total - (last.oldStart + oldCount(last) - 1)} /> : null}
      <details>
        <summary>{`The whole current text (${plural(total, "line")})`}</summary>
        <pre class="whole">{change.from}</pre>
      </details>
      <details>
        <summary>{`The whole proposed text (${plural(linesOf(change.to).length, "line")})`}</summary>
        <pre class="whole">{change.to}</pre>
      </details>
    </div>
  );
}

export function Changes({ changes }: { changes: readonly Change[] }) {
  if (changes.length === 0) return <p class="muted">No field-by-field changes listed.</p>;
  return (
    <table class="diff">
      <thead>
        <tr>
          <th scope="col">Field</th>
          <th scope="col">Now</th>
          <th scope="col">Proposed</th>
        </tr>
      </thead>
      <tbody>
        {changes.map((c) =>
          c.kind === "value" ? (
            <tr>
              <th scope="row">{c.label}</th>
              <td data-label="Now">
                <Value v={c.from} />
              </td>
              <td data-label="Proposed">
                <Value v={c.to} />
              </td>
            </tr>
          ) : (
            <tr>
              <th scope="row">{c.label}</th>
              <td colspan={2} class="text">
                <LineDiff change={c} />
              </td>
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}
