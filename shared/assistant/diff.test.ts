import { describe, expect, it } from "vitest";
import { diffLines, lineDiff, linesOf, type DiffLine } from "./diff";

const same = (text: string): DiffLine => ({ op: "same", text });
const removed = (text: string): DiffLine => ({ op: "removed", text });
const added = (text: string): DiffLine => ({ op: "added", text });

/** The old and new texts a diff describes, rebuilt from its lines. */
const sides = (lines: DiffLine[]) => ({
  before: lines.filter((l) => l.op !== "added").map((l) => l.text),
  after: lines.filter((l) => l.op !== "removed").map((l) => l.text),
});

const numbered = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`);

describe("line diff", () => {
  it("splits lines on any line break; the empty text has none", () => {
    expect(linesOf("")).toEqual([]);
    expect(linesOf("a")).toEqual(["a"]);
    expect(linesOf("a\r\nb\nc\rd")).toEqual(["a", "b", "c", "d"]);
    expect(linesOf("a\n")).toEqual(["a", ""]);
  });

  it("empty and identical texts have no hunks", () => {
    expect(lineDiff("", "")).toEqual([]);
    expect(lineDiff("a\nb\nc", "a\nb\nc")).toEqual([]);
    expect(diffLines("a\nb", "a\nb")).toEqual([same("a"), same("b")]);
  });

  it("from and to the empty text: every line added, or every line removed", () => {
    expect(lineDiff("", "one\ntwo")).toEqual([{ oldStart: 1, newStart: 1, lines: [added("one"), added("two")] }]);
    expect(lineDiff("one\ntwo", "")).toEqual([{ oldStart: 1, newStart: 1, lines: [removed("one"), removed("two")] }]);
  });

  it("an insertion, with three lines of context either side", () => {
    const before = numbered(10).join("\n");
    const after = [...numbered(5), "new line", ...numbered(10).slice(5)].join("\n");
    expect(lineDiff(before, after)).toEqual([
      { oldStart: 3, newStart: 3, lines: [same("line 3"), same("line 4"), same("line 5"), added("new line"), same("line 6"), same("line 7"), same("line 8")] },
    ]);
  });

  it("a deletion", () => {
    expect(lineDiff("a\nb\nc", "a\nc")).toEqual([{ oldStart: 1, newStart: 1, lines: [same("a"), removed("b"), same("c")] }]);
  });

  it("a replacement shows the old line removed and the new one added, in full", () => {
    const long = "x".repeat(500);
    expect(lineDiff(`a\n${long}\nc`, `a\n${long}!\nc`)).toEqual([
      { oldStart: 1, newStart: 1, lines: [same("a"), removed(long), added(`${long}!`), same("c")] },
    ]);
  });

  it("finds a minimal diff inside the changed middle", () => {
    const lines = diffLines("a\nb\nc\nd\ne\nf", "a\nx\nc\nd\ny\nf");
    expect(lines).toEqual([same("a"), removed("b"), added("x"), same("c"), same("d"), removed("e"), added("y"), same("f")]);
    expect(diffLines("p\nq\nr", "q\nr\np")).toEqual([removed("p"), same("q"), same("r"), added("p")]);
  });

  it("changes far apart are separate hunks with their own line numbers", () => {
    const before = numbered(30);
    const after = [...before];
    after[1] = "second, changed";
    after.splice(24, 1);
    const hunks = lineDiff(before.join("\n"), after.join("\n"));
    expect(hunks).toHaveLength(2);
    expect(hunks[0]).toMatchObject({ oldStart: 1, newStart: 1 });
    expect(hunks[0]!.lines).toEqual([same("line 1"), removed("line 2"), added("second, changed"), same("line 3"), same("line 4"), same("line 5")]);
    expect(hunks[1]).toMatchObject({ oldStart: 22, newStart: 22 });
    expect(hunks[1]!.lines).toEqual([same("line 22"), same("line 23"), same("line 24"), removed("line 25"), same("line 26"), same("line 27"), same("line 28")]);
    expect(lineDiff(before.join("\n"), after.join("\n"), { context: 0 }).map((h) => h.lines.length)).toEqual([2, 1]);
  });

  it("a diff always rebuilds both texts, whatever the edits", () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 50; round++) {
      const before = Array.from({ length: random(40) }, () => `w${random(6)}`);
      const after = Array.from({ length: random(40) }, () => `w${random(6)}`);
      expect(sides(diffLines(before.join("\n"), after.join("\n")))).toEqual({ before, after });
    }
  });

  it("one change in a 100 kB body: the change and its context only, quickly", () => {
    const before = numbered(11_000);
    const after = [...before];
    after[5_000] = "<changed>";
    const started = Date.now();
    const hunks = lineDiff(before.join("\n"), after.join("\n"));
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(before.join("\n").length).toBeGreaterThan(100_000);
    expect(hunks).toEqual([
      { oldStart: 4_998, newStart: 4_998, lines: [same("line 4998"), same("line 4999"), same("line 5000"), removed("line 5001"), added("<changed>"), same("line 5002"), same("line 5003"), same("line 5004")] },
    ]);
  });

  it("scattered edits in a long text stay exact under the cap", () => {
    const before = numbered(5_000);
    const after = before.map((l, i) => (i % 500 === 250 ? `${l} (edited)` : l));
    const lines = diffLines(before.join("\n"), after.join("\n"));
    expect(lines.filter((l) => l.op === "removed")).toHaveLength(10);
    expect(lines.filter((l) => l.op === "added")).toHaveLength(10);
  });

  it("past the work cap: all old lines removed and all new lines added, still complete", () => {
    const before = numbered(20_000, "old");
    const after = numbered(20_000, "new");
    const started = Date.now();
    const lines = diffLines(["same head", ...before, "same tail"].join("\n"), ["same head", ...after, "same tail"].join("\n"));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(lines).toEqual([same("same head"), ...before.map(removed), ...after.map(added), same("same tail")]);
    // A small cap forces the fallback on a diff Myers would otherwise find.
    expect(diffLines("a\nb\nc", "a\nx\nc", 1)).toEqual([same("a"), removed("b"), added("x"), same("c")]);
    expect(diffLines("b\nc\nd", "c\nd\ne", 1)).toEqual([removed("b"), removed("c"), removed("d"), added("c"), added("d"), added("e")]);
  });
});
