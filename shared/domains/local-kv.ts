/**
 * Where the local DNS and the local router keep what they know: keys of their own in the HOSTS KV namespace
 * (`local-dns:…`, `local-router:…`), which the admin and the worker share under `npm run dev` and in tests.
 * Development and tests only (shared/domains/select.ts refuses them in production).
 */
export interface LocalKv {
  get(key: string, type: "json"): Promise<unknown>;
  put(key: string, value: string): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The HOSTS binding of a Worker's env, or an error naming it. */
export function localKvOf(env: object, what: string): LocalKv {
  const kv = (env as { HOSTS?: LocalKv }).HOSTS;
  if (!kv) throw new Error(`${what}: the local adapter keeps its state in the HOSTS KV namespace, and this Worker binds none`);
  return kv;
}
