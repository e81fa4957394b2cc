import { approvalProcedures } from "../assistant/approvals";
import { analyticsProcedures } from "./analytics";
import { apiGrantProcedures } from "./api-grants";
import { contentProcedures } from "./content";
import { customersProcedures } from "./customers";
import { procedureKey, type Procedure } from "./define";
import { discountsProcedures } from "./discounts";
import { inventoryProcedures } from "./inventory";
import { mcpSettingsProcedures } from "./mcp-settings";
import { productProcedures } from "./products";
import { staffProcedures } from "./staff";
import { storeProcedures } from "./store";

/**
 * The one procedure registry (ARCHITECTURE §5). /api/rpc, /api/v1 and the AI assistant's tools all
 * look procedures up here; the permission-matrix test walks this list, so a procedure added here is
 * covered by it without further work.
 */
export const PROCEDURES: readonly Procedure[] = [
  ...storeProcedures,
  ...staffProcedures,
  ...productProcedures,
  ...inventoryProcedures,
  ...customersProcedures,
  ...discountsProcedures,
  ...contentProcedures,
  ...analyticsProcedures,
  ...apiGrantProcedures,
  ...approvalProcedures,
  ...mcpSettingsProcedures,
] as readonly Procedure[];

const BY_KEY = new Map<string, Procedure>();
for (const p of PROCEDURES) {
  const key = procedureKey(p);
  if (BY_KEY.has(key)) throw new Error(`Procedure ${key} is declared twice`);
  BY_KEY.set(key, p);
}

/** The procedure at `<router>/<name>`, or undefined. */
export function findProcedure(router: string, name: string): Procedure | undefined {
  return BY_KEY.get(`${router}.${name}`);
}
