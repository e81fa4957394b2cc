import { zValidator } from "@hono/zod-validator";
import type { ValidationTargets } from "hono";
import type { z } from "zod";
import { badRequest, issuesOf } from "../core/errors";

/** zod validation for a route; a failure is a 400 naming each field and why (never a 500). */
export function validate<T extends z.ZodType, Target extends keyof ValidationTargets>(target: Target, schema: T) {
  return zValidator(target, schema, (result) => {
    if (!result.success) throw badRequest(issuesOf(result.error));
  });
}
