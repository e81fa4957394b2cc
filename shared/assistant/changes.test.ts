import { describe, expect, it } from "vitest";
import { money, readChanges, sentence, textChange, textOrValue, valueChange } from "./changes";

describe("proposal changes", () => {
  it("money in the store's currency with its minor units", () => {
    expect(money(125_000, "INR")).toBe("₹1,250.00 (125000 paise)");
    expect(money(125_000, "INR", false)).toBe("₹1,250.00");
    expect(money(1999, "USD")).toBe("$19.99 (1999 minor units)");
    expect(money(500, "JPY")).toBe("JP¥500 (500 minor units)");
    expect(money(null, "INR")).toBeNull();
  });

  it("short text is a value, long or multi-line text a line diff", () => {
    expect(textOrValue("description", "Description", "Soft", "Softer")).toEqual(valueChange("description", "Description", "Soft", "Softer"));
    expect(textOrValue("description", "Description", null, "a\nb")).toMatchObject({ kind: "text", from: "", to: "a\nb" });
    expect(textOrValue("description", "Description", "x".repeat(121), "y")).toMatchObject({ kind: "text" });
  });

  it("the summary clause abbreviates and counts what it leaves out", () => {
    const long = "z".repeat(100);
    expect(sentence([])).toBe("no changes");
    expect(sentence([valueChange("title", "Title", "A", long)])).toBe(`title "A" → "${"z".repeat(57)}…"`);
    expect(sentence([textChange("body", "Body", "a\nb", "a\nc")])).toBe("body (1 line removed, 1 added)");
    expect(sentence([valueChange("vendor", "Vendor", null, "Loom"), valueChange("preorder", "Pre-order", true, false)])).toBe('vendor none → "Loom"; preorder true → false');
    const five = ["a", "b", "c", "d", "e"].map((f) => valueChange(f, f.toUpperCase(), 1, 2));
    expect(sentence(five)).toBe("a 1 → 2; b 1 → 2; c 1 → 2; and 2 more changes");
  });

  it("reads rows of either shape and drops nothing", () => {
    const text = textChange("body", "Body", "a", "b");
    expect(readChanges([text])).toEqual([text]);
    expect(readChanges([{ field: "discount", from: null, to: { code: "X" } }, { field: "preorder", from: false, to: true }])).toEqual([
      valueChange("discount", "discount", null, '{"code":"X"}'),
      valueChange("preorder", "preorder", false, true),
    ]);
    // A text change whose line diff is unreadable still shows both whole texts.
    expect(readChanges([{ ...text, hunks: "?" }])).toEqual([valueChange("body", "Body", "a", "b")]);
    expect(readChanges([42])).toEqual([valueChange("change", "Change", null, 42)]);
    expect(readChanges("not a list")).toEqual([]);
  });
});
