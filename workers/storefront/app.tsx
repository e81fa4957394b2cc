import { eq } from "drizzle-orm";
import type { FC } from "hono/jsx";
import { store } from "#shared/db/schema";
import { storeIdByHostname } from "#shared/db/privileged";
import { withStore } from "#shared/db/with-store";
import { createApp } from "#shared/http/app";
import { AppError } from "#shared/http/errors";
import { errorPage } from "#shared/http/html";
import { Page } from "#shared/http/page";
import type { StorefrontBindings } from "./env";
import { requestHostname } from "./host";
import { cartRoutes } from "./cart";

export const app = createApp<StorefrontBindings, { storeId: string; hostname: string }>({
  service: "storefront",
  htmlErrors: {
    when: (path) => !path.startsWith("/api/"),
    page: (error) => errorPage(error, error.status === 404 ? "Nothing here" : undefined),
  },
});

// Every storefront request belongs to the store of its hostname (SPEC rule 1). Unknown or unverified
// hostnames get a 404. (The 60 s HOSTS cache arrives with the storefront issue.)
app.use(async function resolveStore(c, next) {
  const hostname = requestHostname(c.req.header("host"), c.req.url);
  const storeId = hostname ? await storeIdByHostname(c.var.db, hostname) : null;
  if (!hostname || !storeId) {
    throw new AppError("NOT_FOUND", `No store is served at ${hostname ?? "this address"}.`, { reason: "unknown_host" });
  }
  c.set("hostname", hostname);
  c.set("storeId", storeId);
  await next();
});

const StoreHome: FC<{ name: string }> = ({ name }) => (
  <Page title={name}>
    <div class="card">
      <h1>{name}</h1>
      <p class="muted">Welcome. The catalogue opens here soon.</p>
    </div>
  </Page>
);

app.get("/", async (c) => {
  const row = await withStore(c.var.db, c.var.storeId, async (tx) => {
    const [found] = await tx.select({ name: store.name }).from(store).where(eq(store.id, tx.storeId));
    return found;
  });
  if (!row) throw new AppError("NOT_FOUND", "This store is no longer open.");
  return c.html(<StoreHome name={row.name} />);
});

app.route("/", cartRoutes);
