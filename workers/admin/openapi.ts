import { Hono } from "hono";
import { openApiDocument } from "#shared/registry/openapi";
import type { AdminEnv } from "./context";

/**
 * GET /api/v1/openapi.json: the token API's OpenAPI 3.1 document (shared/registry/openapi.ts), for this
 * admin's own address. Public and without a bearer: it says what the API takes, nothing of any store.
 */
export const openApi = new Hono<AdminEnv>();

// The document depends on the registry (fixed for a Worker's life) and the origin: made once per origin.
const made = new Map<string, string>();

openApi.get("/api/v1/openapi.json", (c) => {
  const origin = new URL(c.req.url).origin;
  let text = made.get(origin);
  if (!text) {
    text = JSON.stringify(openApiDocument(origin));
    if (made.size < 8) made.set(origin, text);
  }
  c.header("cache-control", "public, max-age=300");
  return c.body(text, 200, { "content-type": "application/json; charset=utf-8" });
});
