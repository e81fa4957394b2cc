/**
 * npm run db:migrate | db:seed | db:reset
 * Against the local cluster by default (started for the command if it is not running), or against
 * DATABASE_OWNER_URL / DATABASE_URL when set (migrate and seed only).
 */
import { DEV_STACK, localUrl } from "./lib/config";
import { bootstrapDatabase, dropDatabase, ensureLocalPostgres } from "./lib/pg-cluster";
import { migrate } from "./lib/migrate";
import { seedDemo } from "./lib/seed";

const log = (m: string) => console.log(`[db] ${m}`);
const command = process.argv[2];

async function withOwnerUrl(fn: (ownerUrl: string) => Promise<void>): Promise<void> {
  const remote = process.env.DATABASE_OWNER_URL ?? process.env.DATABASE_URL;
  if (remote) return fn(remote);
  const local = await ensureLocalPostgres(DEV_STACK, log);
  try {
    await fn(localUrl("owner", DEV_STACK));
  } finally {
    await local.release();
  }
}

async function main(): Promise<void> {
  switch (command) {
    case "migrate":
      return withOwnerUrl(async (url) => {
        const n = await migrate(url, log);
        log(n > 0 ? `Applied ${n} migration(s).` : "Nothing to apply: the schema is up to date.");
      });
    case "seed":
      return withOwnerUrl((url) => seedDemo(url, log));
    case "reset": {
      if (process.env.DATABASE_URL || process.env.DATABASE_OWNER_URL) {
        throw new Error("db:reset only rebuilds the local cluster's database. On Neon, reset the branch instead (neon branches reset).");
      }
      const local = await ensureLocalPostgres(DEV_STACK, log);
      try {
        log(`Dropping and recreating database ${DEV_STACK.database}…`);
        await dropDatabase(local.paths, DEV_STACK);
        await bootstrapDatabase(local.paths, DEV_STACK);
        const url = localUrl("owner", DEV_STACK);
        await migrate(url, log);
        await seedDemo(url, log);
        log("Reset done.");
      } finally {
        await local.release();
      }
      return;
    }
    default:
      throw new Error("usage: tsx scripts/db.ts migrate|seed|reset");
  }
}

main().catch((e: unknown) => {
  console.error(`[db] ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
