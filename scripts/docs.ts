/** npm run docs: rewrites the generated tables of docs/admin.md (roles × permissions, procedures) from the code. */
import fs from "node:fs";
import path from "node:path";
import { GENERATED_SECTIONS, withSection } from "#shared/registry/docs";
import { ROOT } from "./lib/config";

const file = path.join(ROOT, "docs/admin.md");
let page = fs.readFileSync(file, "utf8");
for (const [name, render] of Object.entries(GENERATED_SECTIONS)) page = withSection(page, name, render());
fs.writeFileSync(file, page);
console.log("docs/admin.md tables refreshed.");
