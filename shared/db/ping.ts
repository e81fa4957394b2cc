import type { Database } from "./database";
import { sendAlone } from "./statement";
import { pingStatement } from "./statements";

export interface Ping {
  up: boolean;
  latencyMs: number;
  error?: string;
}

/**
 * A real `select 1` over the HTTP path the Workers' units use (one round trip, no connection to set up),
 * bounded in time so a hung database reads as down instead of hanging the caller.
 */
export async function pingDatabase(db: Database, timeoutMs = 3_000): Promise<Ping> {
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const rows = await Promise.race([sendAlone(db, pingStatement), timeout]);
    return { up: rows[0]?.one === 1, latencyMs: Date.now() - started };
  } catch (e) {
    return { up: false, latencyMs: Date.now() - started, error: e instanceof Error ? e.message : String(e) };
  } finally {
    if (timer !== null) clearTimeout(timer);
  }
}
