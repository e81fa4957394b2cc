import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { UCP_VERSION } from "#shared/ucp/profile";

/**
 * The UCP specification's own JSON Schemas (test/fixtures/ucp/<version>, copied from the protocol's repository
 * with their source), every one loaded by its $id into one validator, for the node project's tests.
 */
const ROOT = path.resolve(import.meta.dirname, "../fixtures/ucp", UCP_VERSION, "schemas");

function schemaFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? schemaFiles(full) : name.endsWith(".json") ? [full] : [];
  });
}

export function ucpSchemas() {
  // The schemas annotate themselves (ucp_request, ucp_response…): keywords the validator should not refuse.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  for (const file of schemaFiles(ROOT)) ajv.addSchema(JSON.parse(readFileSync(file, "utf8")) as object);
  return ajv;
}
