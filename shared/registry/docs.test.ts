import { describe, expect, it } from "vitest";
import page from "../../docs/admin.md?raw";
import { GENERATED_SECTIONS, section } from "./docs";

describe("docs/admin.md's generated tables", () => {
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    it(`${name} matches the code (run npm run docs to refresh)`, () => {
      expect(section(page, name)).toBe(render());
    });
  }
});
