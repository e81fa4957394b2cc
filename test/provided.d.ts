import "vitest";

declare module "vitest" {
  export interface ProvidedContext {
    /** app_user connection string of the test database. */
    databaseUrl: string;
    /** host:port of the test run's WebSocket proxy. */
    wsProxy: string;
    /** host:port of a second WebSocket proxy with one upstream slot and one place in its queue (overload tests). */
    tightWsProxy: string;
    /** Connection string of a role with CONNECTION LIMIT 0: every connect fails with 53300. */
    noSlotsDatabaseUrl: string;
    /** The owner's connection string of the test database (the browser walkthroughs' set-up only). */
    ownerDatabaseUrl: string;
    /** The worker's crons, read from wrangler.toml. */
    crons: string[];
  }
}

