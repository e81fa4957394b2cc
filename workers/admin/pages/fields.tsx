import type { FC } from "hono/jsx";
import { FieldError } from "./parts";

/**
 * Form fields of the admin's pages: a label tied to its control, what was typed (or stored), and the
 * refused field's message next to it (`aria-invalid`, `aria-describedby`), so a keyboard and a screen
 * reader get the same form.
 */
interface Base {
  id: string;
  name?: string;
  label: string;
  error?: string | undefined;
  help?: string | undefined;
}

const describedBy = (p: Base) => (p.error ? `${p.id}-error` : undefined);

const Help: FC<{ text: string | undefined }> = ({ text }) => (text ? <p class="muted">{text}</p> : null);

export const TextField: FC<Base & { value: string; type?: string; required?: boolean; maxlength?: number; placeholder?: string; inputmode?: "decimal" | "numeric" | "email" | "tel" | "text"; autocomplete?: string }> = (p) => (
  <>
    <label for={p.id}>{p.label}</label>
    <input
      id={p.id}
      name={p.name ?? p.id}
      type={p.type ?? "text"}
      value={p.value}
      required={p.required}
      maxlength={p.maxlength}
      placeholder={p.placeholder}
      inputmode={p.inputmode}
      autocomplete={p.autocomplete}
      aria-invalid={p.error ? "true" : undefined}
      aria-describedby={describedBy(p)}
    />
    <Help text={p.help} />
    <FieldError id={`${p.id}-error`} error={p.error} />
  </>
);

export const TextArea: FC<Base & { value: string; rows?: number }> = (p) => (
  <>
    <label for={p.id}>{p.label}</label>
    <textarea id={p.id} name={p.name ?? p.id} rows={p.rows ?? 5} aria-invalid={p.error ? "true" : undefined} aria-describedby={describedBy(p)}>
      {p.value}
    </textarea>
    <Help text={p.help} />
    <FieldError id={`${p.id}-error`} error={p.error} />
  </>
);

export const SelectField: FC<Base & { value: string; options: readonly (readonly [value: string, label: string])[] }> = (p) => (
  <>
    <label for={p.id}>{p.label}</label>
    <select id={p.id} name={p.name ?? p.id} aria-invalid={p.error ? "true" : undefined} aria-describedby={describedBy(p)}>
      {p.options.map(([value, label]) => (
        <option value={value} selected={value === p.value}>
          {label}
        </option>
      ))}
    </select>
    <Help text={p.help} />
    <FieldError id={`${p.id}-error`} error={p.error} />
  </>
);

export const CheckField: FC<Base & { checked: boolean }> = (p) => (
  <>
    <label class="check" for={p.id}>
      <input id={p.id} name={p.name ?? p.id} type="checkbox" value="yes" checked={p.checked} aria-describedby={describedBy(p)} /> {p.label}
    </label>
    <FieldError id={`${p.id}-error`} error={p.error} />
  </>
);

/** A refused post's messages by input path (the first for each), for forms whose fields are named as the procedure's input. */
export function issueErrors(error: { data?: Record<string, unknown> | undefined } | undefined): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const issue of (error?.data?.issues as readonly { path: string; message: string }[] | undefined) ?? []) errors[issue.path] ??= issue.message;
  return errors;
}
