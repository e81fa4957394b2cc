import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** app_user connection string of the test database. */
    databaseUrl: string;
    /** host:port of the test run's WebSocket proxy. */
    wsProxy: string;
    /** The worker's crons, read from wrangler.toml. */
    crons: string[];
  }
}

