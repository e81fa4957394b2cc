import { verifyDomainsJob } from "./domains-verify";
import { pruneActivity } from "./activity-prune";
import { runRelay } from "./relay";
import { heartbeat } from "./heartbeat";
import { sweepMedia } from "./media-sweep";
import { marketingTick } from "./marketing-tick";
import { runPreorderBalances } from "./preorder-balance";
import { trackShipments } from "./shipping-track";
import { expireUnpaidOrders } from "./unpaid-expiry";
import type { JobDefinition, JobName } from "./types";

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

/**
 * Every scheduled job of SPEC "Scheduled jobs (worker)", with how often it runs and what it runs. Which
 * trigger reaches each one is shared/jobs/cron.ts (a Cron Trigger, or the Scheduler's sub-minute loop).
 */
export const JOBS: Record<JobName, JobDefinition> = {
  "{outbox}-relay": { name: "{outbox}-relay", everyMs: 5 * SECOND, run: runRelay },
  "{payments}-unpaid-expiry": { name: "{payments}-unpaid-expiry", everyMs: MINUTE, run: expireUnpaidOrders },
  "{payments}-preorder-balance": { name: "{payments}-preorder-balance", everyMs: MINUTE, run: runPreorderBalances },
  "{marketing}-tick": { name: "{marketing}-tick", everyMs: 30 * SECOND, run: (ctx) => marketingTick(ctx) },
  "{shipping}-track": { name: "{shipping}-track", everyMs: 30 * MINUTE, run: trackShipments },
  "{domains}-verify": { name: "{domains}-verify", everyMs: 2 * MINUTE, run: verifyDomainsJob },
  "{system}-heartbeat": { name: "{system}-heartbeat", everyMs: MINUTE, run: heartbeat },
  "{api}-activity-prune": { name: "{api}-activity-prune", everyMs: 24 * 60 * MINUTE, run: pruneActivity },
  "{media}-sweep": { name: "{media}-sweep", everyMs: 24 * 60 * MINUTE, run: (ctx) => sweepMedia(ctx) },
};
