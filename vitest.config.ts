import { cloudflareTest } from "@cloudflare/vitest-pool-workers";
import { configDefaults, defineConfig } from "vitest/config";

type WorkerName = "admin" | "storefront" | "worker";

/**
 * One vitest project per Worker: each runs inside workerd with that Worker's bindings from
 * wrangler.toml, against the real Postgres that test/node/global-setup.ts brings up.
 */
function workerProject(name: WorkerName, include: string[], exclude: string[] = [], extra: { project?: string; groupOrder?: number } = {}) {
  return {
    plugins: [
      cloudflareTest(({ inject }) => ({
        wrangler: { configPath: "./wrangler.toml", environment: name },
        miniflare: {
          bindings: {
            APP_ENV: "test",
            LOG_LEVEL: "warn",
            DATABASE_URL: inject("databaseUrl"),
            DB_WS_PROXY: inject("wsProxy"),
            // Room for one HTTP round trip on a busy 2-core machine; the timeout's own tests
            // (db-unavailable.test.ts) set a short one.
            DB_CONNECT_TIMEOUT_MS: "30000",
            // The local payment gateway (shared/payments/local.ts): test-only secrets.
            PAYMENT_GATEWAY: "local",
            LOCAL_GATEWAY_SECRET: "local-gateway-test-secret",
            // The local courier (shared/shipping/local.ts): test-only secret.
            COURIER: "local",
            LOCAL_COURIER_SECRET: "local-courier-test-secret",
            // App webhooks' signing root (shared/apps/secrets.ts): test-only.
            APP_WEBHOOK_ROOT_SECRET: "local-app-webhook-test-root-secret-0000",
            // Marketing messages' unsubscribe links (shared/mail/links.ts): test-only.
            EMAIL_LINK_SECRET: "local-email-link-test-secret-0000",
            // UCP: the root the stores' signing keys are sealed under and sessions' carts derive from (shared/ucp/): test-only.
            UCP_SIGNING_ROOT_SECRET: "local-ucp-test-root-secret-000000000",
            // Custom domains (shared/domains/): the local DNS and router, kept in the HOSTS namespace.
            DOMAIN_DNS: "local",
            DOMAIN_ROUTER: "local",
            // The person check (shared/challenge/): Turnstile's test keys, answered locally; both pass.
            CHALLENGE: "local",
            TURNSTILE_SITE_KEY: "1x00000000000000000000AA",
            TURNSTILE_SECRET_KEY: "1x0000000000000000000000000000000AA",
          },
          // The worker's nudges go to a queue nothing consumes here: a nudge makes the relay pass over every
          // store of the shared test database at once, racing the tests that relay their own store's rows
          // (the relay's own tests call it, and the nudge consumer's test calls the queue handler directly).
          ...(name === "worker" ? { queueProducers: { OUTBOX_NUDGE: { queueName: "commerce-outbox-nudge-unconsumed" } } } : {}),
        },
      })),
    ],
    test: {
      name: extra.project ?? name,
      include,
      exclude: [...configDefaults.exclude, ...exclude],
      testTimeout: 20_000,
      hookTimeout: 30_000,
      // Every procedure's answer is checked against its output schema (shared/procedures/outputs.ts).
      setupFiles: ["./test/check-outputs.ts"],
      // Files reuse their project's runner and module graph (no isolate): importing the Workers' code once
      // per runner instead of once per file cut the suite's import time by two thirds. Files share the
      // runner's bindings' state (KV, Durable Objects), so a test names its own client address, store or
      // key, as it must in production anyway.
      isolate: false,
      ...(extra.groupOrder ? { sequence: { groupOrder: extra.groupOrder }, fileParallelism: false } : {}),
    },
  };
}

/**
 * The real-browser walkthrough, in Node: Debian's Chromium (playwright-core) against the admin Worker under
 * `wrangler dev`, on the same test database (databaseUrl/wsProxy come from the global setup via inject).
 */
const browserProject = {
  test: {
    name: "browser",
    environment: "node",
    include: ["test/browser/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 90_000,
    // One walkthrough at a time: each runs two or three workerd processes sharing one local state folder,
    // and two at once on a two-core machine starve each other (SQLite busy on the shared KV, slow pages).
    fileParallelism: false,
  },
};

/** Node-side tooling (the local stack: the WebSocket proxy's pool), tested in plain Node. */
const nodeProject = {
  // Node's own tests: the scripts, and product checks that need Node (`*.node.test.ts`: e.g. JSON Schema validation, which compiles code workerd refuses to run).
  test: { name: "node", environment: "node", include: ["scripts/**/*.test.ts", "shared/**/*.node.test.ts"], testTimeout: 10_000 },
};

export default defineConfig({
  test: {
    globalSetup: ["./test/node/global-setup.ts"],
    // The JSON report lets .ci/run print a plain "N passed, N failed" line.
    reporters: ["default", ["json", { outputFile: ".data/vitest-report.json" }]],
    projects: [
      workerProject("admin", ["workers/admin/**/*.test.{ts,tsx}"], ["**/*.load.test.ts"]),
      // Bursts count connections at the shared WebSocket proxy, so they run alone, after everything else.
      workerProject("admin", ["workers/admin/**/*.load.test.ts"], [], { project: "load", groupOrder: 1 }),
      workerProject("storefront", ["workers/storefront/**/*.test.{ts,tsx}"], ["**/*.load.test.ts"]),
      workerProject("storefront", ["workers/storefront/**/*.load.test.ts"], [], { project: "load-storefront", groupOrder: 2 }),
      workerProject(
        "worker",
        ["workers/worker/**/*.test.{ts,tsx}", "shared/**/*.test.{ts,tsx}", "test/**/*.test.{ts,tsx}"],
        ["test/browser/**", "**/*.node.test.ts"],
      ),
      browserProject,
      nodeProject,
    ],
  },
});
