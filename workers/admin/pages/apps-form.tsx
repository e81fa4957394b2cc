import type { FC } from "hono/jsx";
import { APP_EVENT_KINDS } from "#shared/apps/events";
import type { FieldIssue } from "#shared/core/errors";
import { FieldError } from "./parts";

/**
 * The app form of Settings → Apps (./apps.tsx), for a new app and for editing one: its fields, the
 * procedures' input read from them, and a refused post's typed values with each error next to its field.
 */

/** What the form shows: values (stored or typed) and the error of each refused field. */
export interface AppDraft {
  name: string;
  url: string;
  /** The public groups ticked (APP_EVENT_KINDS) or `*`. */
  groups: string[];
  /** Other kinds, as typed: `order.paid, refund.failed`. */
  kinds: string;
  active: boolean;
}

export type AppField = "name" | "url" | "events";

export interface AppFormState {
  draft: AppDraft;
  errors: Partial<Record<AppField, string>>;
}

export const EMPTY_APP: AppFormState = { draft: { name: "", url: "", groups: [], kinds: "", active: true }, errors: {} };

const GROUP_CHOICES = ["*", ...APP_EVENT_KINDS] as const;
const GROUP_LABELS: Record<string, string> = { "*": "Every event below" };

export function stateOfApp(app: { name: string; url: string; events: string[]; active: boolean }): AppFormState {
  const groups = app.events.filter((e) => (GROUP_CHOICES as readonly string[]).includes(e));
  const kinds = app.events.filter((e) => !groups.includes(e)).join(", ");
  return { draft: { name: app.name, url: app.url, groups, kinds, active: app.active }, errors: {} };
}

/** The draft a form post carries (`groups` may repeat, so the body is read with all values). */
export function draftOf(form: Record<string, string | File | (string | File)[]>): AppDraft {
  const text = (name: string) => {
    const v = form[name];
    return typeof v === "string" ? v : "";
  };
  const all = form.groups;
  const groups = (Array.isArray(all) ? all : all === undefined ? [] : [all]).filter((v): v is string => typeof v === "string");
  return { name: text("name"), url: text("url"), groups, kinds: text("kinds"), active: text("active") !== "" };
}

/** apps.create's input from a draft; apps.update's adds the id and `active`. */
export function appInput(d: AppDraft) {
  const kinds = d.kinds.split(/[\s,]+/).filter((k) => k !== "");
  return { name: d.name, url: d.url, events: [...d.groups, ...kinds] };
}

/** A refused post as the form shows it again: each issue next to its field, the others for the page's alert. */
export function stateOfFailure(draft: AppDraft, issues: readonly FieldIssue[]): AppFormState & { unplaced: FieldIssue[] } {
  const errors: AppFormState["errors"] = {};
  const unplaced: FieldIssue[] = [];
  for (const issue of issues) {
    const [field, index] = issue.path.split(".");
    if (field !== "name" && field !== "url" && field !== "events") {
      unplaced.push(issue);
      continue;
    }
    if (errors[field]) continue;
    const entry = field === "events" && index !== undefined ? appInput(draft).events[Number(index)] : undefined;
    errors[field] = entry ? `${entry}: ${issue.message}` : issue.message;
  }
  return { draft, errors, unplaced };
}

export const AppForm: FC<{ csrf: string; action: "create" | "update"; id?: string; heading: string; submit: string; state: AppFormState }> = ({
  csrf,
  action,
  id,
  heading,
  submit,
  state,
}) => {
  const idOf = (name: string) => (action === "create" ? `app-${name}` : `edit-${name}`);
  const { draft, errors } = state;
  const described = (name: AppField) => (errors[name] ? { "aria-invalid": "true", "aria-describedby": `${idOf(name)}-error` } : {});
  return (
    <form method="post" action="/settings/apps" class="card" id={action === "update" ? "edit" : undefined}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="action" value={action} />
      {id !== undefined ? <input type="hidden" name="id" value={id} /> : null}
      <h2>{heading}</h2>
      <label for={idOf("name")}>Name</label>
      <input id={idOf("name")} name="name" value={draft.name} required maxlength={100} placeholder="Accounting sync" {...described("name")} />
      <FieldError id={`${idOf("name")}-error`} error={errors.name} />
      <label for={idOf("url")}>Webhook URL</label>
      <input id={idOf("url")} name="url" type="url" value={draft.url} required maxlength={2048} placeholder="https://example.com/webhooks" {...described("url")} />
      <FieldError id={`${idOf("url")}-error`} error={errors.url} />
      <fieldset {...described("events")}>
        <legend>Events</legend>
        {GROUP_CHOICES.map((g) => (
          <label class="check">
            <input type="checkbox" name="groups" value={g} checked={draft.groups.includes(g)} /> <code>{g}</code> {GROUP_LABELS[g] ?? ""}
          </label>
        ))}
        <label for={idOf("kinds")}>Or single kinds (comma-separated)</label>
        <input id={idOf("kinds")} name="kinds" value={draft.kinds} maxlength={2000} placeholder="order.paid, refund.failed" />
        <FieldError id={`${idOf("events")}-error`} error={errors.events} />
      </fieldset>
      {action === "update" ? (
        <label class="check">
          <input type="checkbox" name="active" value="on" checked={draft.active} /> Active (a disabled app gets no deliveries)
        </label>
      ) : null}
      <button type="submit">{submit}</button>
      {action === "update" ? (
        <>
          {" "}
          <a href="/settings/apps">Cancel</a>
        </>
      ) : null}
    </form>
  );
};
