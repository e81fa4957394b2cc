/** npm run docs: rewrites the README's generated tables (roles × permissions, procedures) from the code. */
import fs from "node:fs";
import path from "node:path";
import { GENERATED_SECTIONS, withSection } from "#shared/registry/docs";
import { ROOT } from "./lib/config";

const file = path.join(ROOT, "README.md");
let readme = fs.readFileSync(file, "utf8");
for (const [name, render] of Object.entries(GENERATED_SECTIONS)) readme = withSection(readme, name, render());
fs.writeFileSync(file, readme);
console.log("README tables refreshed.");
