import { createApp } from "#shared/http/app";
import { errorPage } from "#shared/http/html";
import { apiV1 } from "./api-v1";
import type { AdminEnv } from "./context";
import type { AdminBindings } from "./env";
import { invite } from "./invite";
import { login } from "./login";
import { mcp } from "./mcp";
import { authorize } from "./oauth/authorize";
import { oauth } from "./oauth/routes";
import { pages } from "./pages";
import { rpc } from "./rpc";

const API_PREFIXES = ["/api/", "/.well-known/"];

/** The admin Worker: sign-in, the admin pages, and the RPC door. Sub-apps share this app's middleware. */
export const app = createApp<AdminBindings, AdminEnv["Variables"]>({
  service: "admin",
  htmlErrors: { when: (path) => !API_PREFIXES.some((p) => path.startsWith(p)), page: (error) => errorPage(error) },
});

app.route("/", login);
app.route("/", rpc);
app.route("/", apiV1);
app.route("/", oauth);
app.route("/", mcp);
app.route("/", authorize);
app.route("/", invite);
app.route("/", pages);
