import type { Child, FC } from "hono/jsx";
import { z } from "zod";
import { AppError, isAppError } from "#shared/core/errors";
import { postSession, type AdminContext, type SignedIn } from "../context";
import { sessionForm } from "../session-form";
import { storePage, type StorePage } from "./chrome";

export interface FormNotice {
  ok: boolean;
  text: string;
}

/** A page's one-line outcome: a status notice, or an alert. */
export const Notice: FC<{ notice: FormNotice | undefined }> = ({ notice }) =>
  notice ? (
    <p class={notice.ok ? "notice" : "alert"} role={notice.ok ? "status" : "alert"}>
      {notice.text}
    </p>
  ) : null;

export type Field = (name: string) => string | undefined;

/** A post the procedure refused with a 400 or 409: which action, what was typed, and why. */
export interface FailedPost {
  action: string;
  field: Field;
  error: AppError;
}

/**
 * One action of a form post: reads the fields and calls its procedure (a thrown 400 or 409 re-renders the
 * page). It may answer `{ redirectTo }` (where the new record lives) or `{ render }` (a page to show instead
 * of redirecting, e.g. the form again with one more row).
 */
export type FormAction = (signedIn: Pick<SignedIn, "id">, field: Field, base: () => Promise<StorePage>) => Promise<unknown>;

const redirectOf = (result: unknown): string | undefined =>
  typeof result === "object" && result !== null && typeof (result as { redirectTo?: unknown }).redirectTo === "string" ? (result as { redirectTo: string }).redirectTo : undefined;
const renderedOf = (result: unknown): Response | undefined =>
  typeof result === "object" && result !== null && (result as { render?: unknown }).render instanceof Response ? (result as { render: Response }).render : undefined;

type Render = (c: AdminContext, notice?: FormNotice, status?: 200 | 400 | 409, failed?: FailedPost) => Promise<Response>;

/**
 * A settings-style form post: refuses a wrong session CSRF token (sessionForm), runs the chosen
 * action, re-renders the page with the message of a 400 or 409 (and the failed post, so a page can keep
 * what was typed and name the field), and otherwise sends the browser back to `done` (303), which may
 * depend on the action. An unknown action is a 400.
 */
export async function handleFormPost(
  c: AdminContext,
  render: Render,
  done: string | ((action: string) => string),
  actions: Record<string, FormAction>,
  unknownAction: string,
): Promise<Response> {
  // The session's cookie is all a post needs before its change: the change's own unit finds the session
  // (one or two round trips in all); the page's chrome is read only when an action or a failure needs it.
  const { signedIn, text: field } = await sessionForm(c, postSession);
  let page: Promise<StorePage> | undefined;
  const base = () => (page ??= storePage(c));
  const name = field("action") ?? "";
  const action = Object.hasOwn(actions, name) ? actions[name] : undefined;
  if (!action) return render(c, { ok: false, text: unknownAction }, 400);
  let result: unknown;
  try {
    result = await action(signedIn, field, base);
  } catch (e) {
    if (isAppError(e) && (e.code === "BAD_REQUEST" || e.code === "CONFLICT")) {
      return render(c, { ok: false, text: e.message }, e.code === "CONFLICT" ? 409 : 400, { action: name, field, error: e });
    }
    throw e;
  }
  const rendered = renderedOf(result);
  if (rendered) return rendered;
  return c.redirect(redirectOf(result) ?? (typeof done === "string" ? done : done(name)), 303);
}

/**
 * The store's currency as a form carried it (a hidden field: a store's currency never changes once it
 * exists), so a post converts amounts without reading the store first; read when the field is missing or
 * is not a currency. Someone who edits it only mis-states their own amounts, which the procedure checks.
 */
export async function formCurrency(field: Field, base: () => Promise<StorePage>): Promise<string> {
  const sent = field("currency");
  if (sent && /^[A-Z]{3}$/.test(sent) && Intl.supportedValuesOf("currency").includes(sent)) return sent;
  return (await base()).me.store.currency;
}

/** One button that posts one action about one row (Delete, Cancel, Redeliver, Revoke), with the session's CSRF token. */
export const RowAction: FC<{ to: string; csrf: string; fields: Record<string, string>; action?: string; label: string; ariaLabel?: string; class?: string }> = (p) => (
  <form method="post" action={p.to} class="inline">
    <input type="hidden" name="csrf" value={p.csrf} />
    {Object.entries(p.fields).map(([name, value]) => (
      <input type="hidden" name={name} value={value} />
    ))}
    <button type="submit" name={p.action === undefined ? undefined : "action"} value={p.action} class={p.class ?? "secondary"} aria-label={p.ariaLabel}>
      {p.label}
    </button>
  </form>
);

/**
 * The confirmation before something that cannot be undone (`?confirm=…` on the record's page): a heading
 * naming it, what goes and what stays, one button that posts `action` to `to`, and the way back.
 */
export const ConfirmCard: FC<{ id: string; heading: Child; to: string; csrf: string; action: string; fields?: Record<string, string>; label: string; keep: string; children?: Child }> = (p) => (
  <div class="card" id={p.id} role="alertdialog" aria-labelledby={`${p.id}-heading`}>
    <h2 id={`${p.id}-heading`}>{p.heading}</h2>
    <p>{p.children}</p>
    <RowAction to={p.to} csrf={p.csrf} fields={p.fields ?? {}} action={p.action} label={p.label} class="danger" /> <a href={p.to}>{p.keep}</a>
  </div>
);

/** The notice a page shows after a successful post redirected to it with `?done=<key>` (unknown keys: none). */
export function doneNotice(c: AdminContext, words: Readonly<Record<string, string>>): FormNotice | undefined {
  const done = c.req.query("done") ?? "";
  return Object.hasOwn(words, done) ? { ok: true, text: words[done]! } : undefined;
}

/** A path's record id: a UUID, or the 404 page saying `what` is not in this store (before any database work). */
export function idParam(c: AdminContext, what: string, name = "id"): string {
  const id = c.req.param(name) ?? "";
  if (!z.uuid().safeParse(id).success) throw new AppError("NOT_FOUND", `${what} not found in this store.`);
  return id;
}
