import { describe, expect, it } from "vitest";
import readme from "../../README.md?raw";
import { GENERATED_SECTIONS, section } from "./docs";

describe("README's generated tables", () => {
  for (const [name, render] of Object.entries(GENERATED_SECTIONS)) {
    it(`${name} matches the code (run npm run docs to refresh)`, () => {
      expect(section(readme, name)).toBe(render());
    });
  }
});
