/** npm run openapi: writes the token API's OpenAPI document and its generated client types (scripts/lib/openapi-files.ts). */
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./lib/config";
import { OPENAPI_FILES, openApiFiles } from "./lib/openapi-files";

const files = await openApiFiles();
for (const [name, file] of Object.entries(OPENAPI_FILES)) {
  fs.mkdirSync(path.dirname(path.join(ROOT, file)), { recursive: true });
  fs.writeFileSync(path.join(ROOT, file), files[name as keyof typeof files]);
}
console.log(`${Object.values(OPENAPI_FILES).join(" and ")} written.`);
