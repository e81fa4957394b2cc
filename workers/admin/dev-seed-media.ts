import { Hono } from "hono";
import { z } from "zod";
import { AppError, badRequest, issuesOf } from "#shared/core/errors";
import { seedDemoMedia } from "#shared/jobs/demo-media";
import { mediaServiceOf } from "#shared/media/store";
import type { AdminEnv } from "./context";

/**
 * POST /-dev/seed-media {store, limit?}: demo photos for a seeded store (shared/jobs/demo-media.ts), called by
 * `npm run dev` once the Workers are up (scripts/dev.ts). Development and tests only: with any other APP_ENV
 * the route is not there (404), as the local providers are refused outside them. The same-site guard stands
 * in front of it (app.ts) and it takes a JSON body only: a page of another site cannot post it.
 */
export const devSeedMedia = new Hono<AdminEnv>();

const input = z.strictObject({
  store: z.string().trim().min(1).max(100).describe("The store's slug (demo, other)"),
  limit: z.number().int().min(1).max(20).default(6).describe("At most this many images in this call; `remaining` says how many are left"),
});

devSeedMedia.post("/-dev/seed-media", async (c) => {
  const env = c.var.config.APP_ENV;
  if (env !== "development" && env !== "test") throw new AppError("NOT_FOUND", "Not found");
  if (!(c.req.header("content-type") ?? "").startsWith("application/json")) throw new AppError("UNSUPPORTED_MEDIA_TYPE", "Send a JSON body: {\"store\": \"demo\"}.");
  const parsed = input.safeParse(await c.req.json().catch(() => null));
  if (!parsed.success) throw badRequest(issuesOf(parsed.error));
  const { media } = mediaServiceOf(c.env);
  if (!media) throw new AppError("SERVICE_UNAVAILABLE", "No MEDIA bucket is bound to the admin Worker (wrangler.toml [[r2_buckets]]).");
  const outcome = await seedDemoMedia(c.var.db, parsed.data.store, { services: { media }, log: c.var.log, limit: parsed.data.limit });
  if (!outcome) throw new AppError("NOT_FOUND", `No store ${parsed.data.store} with an owner: seed it first (npm run dev seeds demo and other).`);
  return c.json(outcome);
});
