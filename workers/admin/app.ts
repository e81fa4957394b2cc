import { createApp } from "#shared/http/app";
import { sameSiteRoutes } from "#shared/http/csrf";
import { errorPage } from "#shared/http/html";
import { apiV1 } from "./api-v1";
import { devSeedMedia } from "./dev-seed-media";
import type { AdminEnv } from "./context";
import type { AdminBindings } from "./env";
import { invite } from "./invite";
import { login } from "./login";
import { mcp } from "./mcp";
import { authorize } from "./oauth/authorize";
import { oauth } from "./oauth/routes";
import { openApi } from "./openapi";
import { pages } from "./pages";
import { rpc } from "./rpc";

const API_PREFIXES = ["/api/", "/.well-known/"];

/** The admin Worker: sign-in, the admin pages, and the RPC door. Sub-apps share this app's middleware. */
export const app = createApp<AdminBindings, AdminEnv["Variables"]>({
  service: "admin",
  htmlErrors: { when: (path) => !API_PREFIXES.some((p) => path.startsWith(p)), page: (error) => errorPage(error) },
});

// The cookie doors answer same-site requests only: each route but a GET of these sub-apps has the same-site
// guard (shared/http/csrf.ts) in front of it, beside the security headers createApp mounts, so a cross-site
// post is refused (403) before any handler and no handler checks it. The bearer doors (API v1, OAuth's
// registration, token and revocation endpoints, MCP, which checks Origin itself) carry no cookie.
app.route("/", sameSiteRoutes(login));
app.route("/", sameSiteRoutes(rpc));
app.route("/", openApi);
app.route("/", apiV1);
app.route("/", oauth);
app.route("/", mcp);
app.route("/", sameSiteRoutes(authorize));
app.route("/", sameSiteRoutes(invite));
app.route("/", sameSiteRoutes(pages));
// Development and tests only (it answers 404 otherwise): demo photos for npm run dev.
app.route("/", sameSiteRoutes(devSeedMedia));
