import { createApp } from "#shared/http/app";
import { errorPage } from "#shared/http/html";
import type { AdminBindings } from "./env";
import { login } from "./login";

const API_PREFIXES = ["/api/", "/.well-known/"];

export const app = createApp<AdminBindings>({
  service: "admin",
  htmlErrors: { when: (path) => !API_PREFIXES.some((p) => path.startsWith(p)), page: (error) => errorPage(error) },
});

app.route("/", login);
app.get("/", (c) => c.redirect("/login", 302));
