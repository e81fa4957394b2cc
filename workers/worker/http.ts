import { pingDatabase } from "#shared/db/ping";
import { createApp } from "#shared/http/app";
import { agentPlatform } from "./agent-platform";
import { courierPage } from "./courier-page";
import type { WorkerBindings } from "./env";
import { webhooks } from "./webhooks";

export const http = createApp<WorkerBindings>({ service: "worker" });

http.route("/", webhooks);
// The local courier's tracking page (development and tests only); its buttons' webhooks go to this worker's own route.
http.route("/", courierPage(async (request, c) => http.fetch(request, c.env, c.executionCtx)));

// A local AI agent platform (development and tests only): its UCP profile and where stores' order updates arrive.
http.route("/", agentPlatform);

// GET /health: 200 {"ok":true,"db":"up"} after a real `select 1`; 503 {"ok":false,"db":"down"} otherwise.
http.get("/health", async (c) => {
  const ping = await pingDatabase(c.var.db);
  c.header("cache-control", "no-store");
  if (!ping.up) c.var.log.error("health.db_down", { error: ping.error, latencyMs: ping.latencyMs });
  return c.json({ ok: ping.up, db: ping.up ? "up" : "down" }, ping.up ? 200 : 503);
});
