import pg from "pg";
import { DEV_STACK, localUrl, redactUrl, TEST_STACK, type LocalStack } from "../../scripts/lib/config";
import { bootstrapDatabase, dropDatabase, ensureLocalPostgres, superuserClient, type ClusterPaths } from "../../scripts/lib/pg-cluster";

/**
 * Where the scale benchmark's database lives: a database of its own (`commerce_scale`) in the project's
 * local cluster, never the dev or test one; or, when SCALE_DATABASE_OWNER_URL is set, a database given by
 * URL (e.g. a fresh Neon branch): SCALE_DATABASE_OWNER_URL for migrations, the seed and the fixture (the
 * fixture is loaded across stores, so that role must bypass RLS: superuser or BYPASSRLS), SCALE_DATABASE_URL
 * for the measurements (app_user; defaults to the owner URL).
 */
export interface ScaleDatabase {
  /** For printing. */
  where: string;
  ownerUrl: string;
  /** app_user: every measurement runs as it. */
  appUrl: string;
  /** A connection that bypasses RLS, for the fixture (the local superuser, or the owner URL's role). */
  loader(): Promise<pg.Client>;
  /** Whether `rebuild` can drop and recreate the database (local cluster only). */
  droppable: boolean;
  /** Drops and recreates the (empty) database; local only. */
  recreate(): Promise<void>;
}

const PROTECTED = new Set([DEV_STACK.database, TEST_STACK.database, "commerce", "commerce_test", "commerce_bench", "postgres"]);

export const SCALE_STACK: LocalStack = { ...DEV_STACK, database: process.env.SCALE_DB_NAME ?? "commerce_scale" };

export async function connect(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** Brings up the local cluster (or takes the URLs) and makes sure the scale database exists. */
export async function openScaleDatabase(log: (m: string) => void): Promise<ScaleDatabase> {
  const ownerUrl = process.env.SCALE_DATABASE_OWNER_URL;
  if (ownerUrl) {
    const appUrl = process.env.SCALE_DATABASE_URL ?? ownerUrl;
    return {
      where: redactUrl(ownerUrl),
      ownerUrl,
      appUrl,
      droppable: false,
      loader: async () => {
        const client = await connect(ownerUrl);
        const { rows } = await client.query<{ ok: boolean }>("select rolsuper or rolbypassrls as ok from pg_roles where rolname = current_user");
        if (!rows[0]?.ok) {
          await client.end();
          throw new Error("SCALE_DATABASE_OWNER_URL must name a role that bypasses RLS (superuser or BYPASSRLS, e.g. Neon's owner) to load the fixture across stores.");
        }
        return client;
      },
      recreate: () => Promise.reject(new Error("A database given by URL is never dropped: point SCALE_DATABASE_OWNER_URL at a fresh branch.")),
    };
  }
  if (PROTECTED.has(SCALE_STACK.database)) throw new Error(`Refusing to use ${SCALE_STACK.database} as the scale database.`);
  // The cluster is shared with `npm run dev` and the test suite: it is started if needed and never stopped here.
  const local = await ensureLocalPostgres(SCALE_STACK, log);
  const paths: ClusterPaths = local.paths;
  return {
    where: `${SCALE_STACK.database} on 127.0.0.1:${SCALE_STACK.pgPort} (local cluster)`,
    ownerUrl: localUrl("owner", SCALE_STACK),
    appUrl: localUrl("app", SCALE_STACK),
    droppable: true,
    loader: async () => {
      const client = superuserClient(paths, SCALE_STACK, SCALE_STACK.database);
      await client.connect();
      return client;
    },
    recreate: async () => {
      if (PROTECTED.has(SCALE_STACK.database)) throw new Error(`Refusing to drop ${SCALE_STACK.database}.`);
      await dropDatabase(paths, SCALE_STACK);
      await bootstrapDatabase(paths, SCALE_STACK);
    },
  };
}
