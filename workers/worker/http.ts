import { pingDatabase } from "#shared/db/ping";
import { createApp } from "#shared/http/app";
import type { WorkerBindings } from "./env";
import { webhooks } from "./webhooks";

export const http = createApp<WorkerBindings>({ service: "worker" });

http.route("/", webhooks);

// GET /health: 200 {"ok":true,"db":"up"} after a real `select 1`; 503 {"ok":false,"db":"down"} otherwise.
http.get("/health", async (c) => {
  const ping = await pingDatabase(c.var.db);
  c.header("cache-control", "no-store");
  if (!ping.up) c.var.log.error("health.db_down", { error: ping.error, latencyMs: ping.latencyMs });
  return c.json({ ok: ping.up, db: ping.up ? "up" : "down" }, ping.up ? 200 : 503);
});
