import { dispatchQueue } from "./queue";
import { dispatchCron } from "./scheduled";
import { http } from "./http";
import type { WorkerBindings } from "./env";

export { Scheduler } from "./scheduler";
export { RateLimiter } from "#shared/limits/rate-limiter";

export default {
  fetch: http.fetch,
  async scheduled(controller, env, _ctx) {
    await dispatchCron(controller.cron, controller.scheduledTime, env);
  },
  async queue(batch, env, _ctx) {
    await dispatchQueue(batch, env);
  },
} satisfies ExportedHandler<WorkerBindings>;
