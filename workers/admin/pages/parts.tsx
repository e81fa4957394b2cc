import type { Child, FC } from "hono/jsx";
import { hasNextPage, totalText, type Paged } from "#shared/procedures/paging";

/** Small pieces of admin pages that carry no meaning of their own. */

/** A page section with its heading (`<id>-heading` labels it). */
export const Section: FC<{ id: string; title: string; children?: Child }> = ({ id, title, children }) => (
  <section id={id} aria-labelledby={`${id}-heading`}>
    <h2 id={`${id}-heading`}>{title}</h2>
    {children}
  </section>
);

export interface Column {
  label: string;
  /** Right-aligned figures. */
  num?: boolean;
}

/** A table that scrolls sideways on a narrow screen; the rows are the children. */
export const Table: FC<{ columns: readonly Column[]; children?: Child }> = ({ columns, children }) => (
  <div class="scroll">
    <table>
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col" class={c.num ? "num" : undefined}>
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
);

/** A refused field's message, next to it; the field names it with `aria-describedby="<id>"`. */
export const FieldError: FC<{ id: string; error: string | undefined }> = ({ id, error }) =>
  error ? (
    <p class="field-error" id={id}>
      {error}
    </p>
  ) : null;

/** Previous / next links of a paged list (no JavaScript), with how many there are ("200+" past the count's cap). */
export const Pager: FC<{ list: Paged<unknown>; noun: string; link: (page: number) => string }> = ({ list, noun, link }) => (
  <nav class="pager" aria-label="Pages">
    {list.page > 1 ? (
      <a rel="prev" href={link(list.page - 1)}>
        ← Previous
      </a>
    ) : null}
    <span class="muted">
      {totalText(list)} {noun}
    </span>
    {hasNextPage(list) ? (
      <a rel="next" href={link(list.page + 1)}>
        Next →
      </a>
    ) : null}
  </nav>
);

/** "Page 2 of 10+ · 200+ orders": where a paged list is, for pagers that show the page count. */
export function pageCountText(list: Paged<unknown>, noun: string): string {
  const pages = Math.max(1, Math.ceil(list.total / list.pageSize));
  return `Page ${list.page} of ${pages}${list.totalCapped ? "+" : ""} · ${totalText(list)} ${noun}`;
}

/** A list's search box (a GET form, so it works without JavaScript); `children` are extra filters. */
export const SearchBar: FC<{ action: string; id: string; label: string; placeholder: string; value: string; children?: Child }> = (p) => (
  <form class="toolbar" method="get" action={p.action} role="search">
    <label for={p.id} class="visually-hidden">
      {p.label}
    </label>
    <input id={p.id} name="query" type="search" placeholder={p.placeholder} value={p.value} />
    {p.children}
    <button type="submit">Search</button>
  </form>
);
