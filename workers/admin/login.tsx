import type { FC } from "hono/jsx";
import { z } from "zod";
import { createApp } from "#shared/http/app";
import { validate } from "#shared/http/validate";
import { Page } from "#shared/http/page";
import type { AdminBindings } from "./env";

export const login = createApp<AdminBindings>({ service: "admin" });

/** `next` must be a same-origin path: no scheme, no host, no protocol-relative `//`, no backslashes. */
export function safeNextPath(next: string | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.includes("\\")) return "/";
  return next;
}

const LoginForm: FC<{ next: string; message?: string | undefined }> = ({ next, message }) => (
  <Page title="Sign in · Commerce admin">
    <div class="card">
      <h1>Sign in</h1>
      <p class="muted">Manage your stores.</p>
      {message ? <p role="alert">{message}</p> : null}
      <form method="post" action="/login">
        <input type="hidden" name="next" value={next} />
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
    </div>
  </Page>
);

// GET /login: the sign-in form. Checking the password and sessions arrive with the admin issue.
login.get("/login", validate("query", z.object({ next: z.string().max(2048).optional() })), (c) => {
  const { next } = c.req.valid("query");
  c.header("cache-control", "no-store");
  return c.html(<LoginForm next={safeNextPath(next)} />);
});
