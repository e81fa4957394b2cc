import type { FC } from "hono/jsx";
import type { FieldIssue } from "#shared/core/errors";
import type { FailedPost, Field } from "./form-post";

/**
 * The short-link form of the Links page (./links.tsx), for a new link and for editing one: its fields,
 * the procedures' input read from them, and a refused post's typed values with each error next to its
 * field.
 */

const LINK_FIELDS = [
  { name: "slug", label: "Slug", required: true, maxlength: 64, placeholder: "summer-sale", pattern: "[a-z0-9\\-]{1,64}" },
  { name: "target", label: "Target", required: true, maxlength: 2048, placeholder: "/collections/sale or https://example.com/page" },
  { name: "utm_source", label: "UTM source", required: true, maxlength: 200, placeholder: "" },
  { name: "utm_medium", label: "UTM medium", required: true, maxlength: 200, placeholder: "" },
  { name: "utm_campaign", label: "UTM campaign", required: true, maxlength: 200, placeholder: "" },
  { name: "utm_term", label: "UTM term (optional)", required: false, maxlength: 200, placeholder: "" },
  { name: "utm_content", label: "UTM content (optional)", required: false, maxlength: 200, placeholder: "" },
] as const;

type LinkFieldName = (typeof LINK_FIELDS)[number]["name"];
export type LinkDraft = Record<LinkFieldName, string>;

/** What the form shows: values (stored or typed) and the error of each refused field. */
export interface LinkFormState {
  draft: LinkDraft;
  errors: Partial<Record<LinkFieldName, string>>;
}

interface StoredLink {
  slug: string;
  target: string;
  utm: { source: string; medium: string; campaign: string; term: string | null; content: string | null };
}

export const EMPTY_LINK: LinkFormState = { draft: draftOf(() => undefined), errors: {} };

export function stateOfLink(l: StoredLink): LinkFormState {
  const { source, medium, campaign, term, content } = l.utm;
  return {
    draft: { slug: l.slug, target: l.target, utm_source: source, utm_medium: medium, utm_campaign: campaign, utm_term: term ?? "", utm_content: content ?? "" },
    errors: {},
  };
}

function draftOf(field: Field): LinkDraft {
  return Object.fromEntries(LINK_FIELDS.map((f) => [f.name, field(f.name) ?? ""])) as LinkDraft;
}

/** links.create's input, and links.update's without the id (empty optional tags are cleared). */
export function linkInput(field: Field) {
  const optional = (name: string) => field(name)?.trim() || undefined;
  const utm = { source: field("utm_source") ?? "", medium: field("utm_medium") ?? "", campaign: field("utm_campaign") ?? "", term: optional("utm_term"), content: optional("utm_content") };
  return { slug: field("slug") ?? "", target: field("target") ?? "", utm };
}

/** The form field an input path names (`utm.source` → `utm_source`), if the form has it. */
function fieldOfPath(path: string): LinkFieldName | undefined {
  const name = path.replace(/^utm\./, "utm_");
  return LINK_FIELDS.find((f) => f.name === name)?.name;
}

/** A refused post as the form shows it again: what was typed, each issue next to its field. */
export function stateOfFailure(failed: FailedPost): LinkFormState & { unplaced: FieldIssue[] } {
  const issues = (failed.error.data?.issues as readonly FieldIssue[] | undefined) ?? [];
  const errors: LinkFormState["errors"] = {};
  const unplaced: FieldIssue[] = [];
  for (const issue of issues) {
    const name = fieldOfPath(issue.path);
    if (name && !errors[name]) errors[name] = issue.message;
    else if (!name) unplaced.push(issue);
  }
  return { draft: draftOf(failed.field), errors, unplaced };
}

export const LinkForm: FC<{ csrf: string; action: "create" | "update"; id?: string | undefined; heading: string; submit: string; state: LinkFormState }> = ({
  csrf,
  action,
  id,
  heading,
  submit,
  state,
}) => {
  // Ids stay unique on a page that shows both forms.
  const idOf = (name: string) => (action === "create" ? name : `edit-${name}`);
  return (
    <form method="post" action="/links" class="card" id={action === "update" ? "edit" : undefined}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="action" value={action} />
      {id !== undefined ? <input type="hidden" name="id" value={id} /> : null}
      <h2>{heading}</h2>
      {LINK_FIELDS.map((f) => {
        const error = state.errors[f.name];
        return (
          <>
            <label for={idOf(f.name)}>{f.label}</label>
            <input
              id={idOf(f.name)}
              name={f.name}
              value={state.draft[f.name]}
              required={f.required}
              maxlength={f.maxlength}
              placeholder={f.placeholder || undefined}
              pattern={"pattern" in f ? f.pattern : undefined}
              aria-invalid={error ? "true" : undefined}
              aria-describedby={error ? `${idOf(f.name)}-error` : undefined}
            />
            {error ? (
              <p class="field-error" id={`${idOf(f.name)}-error`}>
                {error}
              </p>
            ) : null}
          </>
        );
      })}
      <button type="submit">{submit}</button>
      {action === "update" ? (
        <>
          {" "}
          <a href="/links">Cancel</a>
        </>
      ) : null}
    </form>
  );
};
