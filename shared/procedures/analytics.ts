import type { StoreProcedure } from "./define";

// Filled in by the catalog work (issue 3).
export const analyticsProcedures: StoreProcedure[] = [];
