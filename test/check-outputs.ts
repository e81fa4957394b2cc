import { checkOutputs } from "#shared/procedures/outputs";

/**
 * Every Worker project's setup file (vitest.config.ts): each procedure's answer is checked against its
 * declared output schema, so a test exercising a procedure fails when the two disagree (docs/api.md
 * "Output schemas"). Production never switches it on.
 */
checkOutputs(true);
