import { PERMISSIONS, ROLE_LABELS, ROLE_PERMISSIONS } from "../auth/permissions";
import { ROLES } from "../db/schema";
import { procedureKey } from "../procedures/define";
import { PROCEDURES } from "./procedures";

/**
 * The generated tables of docs/admin.md (between `<!-- name:start -->` and `<!-- name:end -->` markers).
 * `npm run docs` writes them; shared/registry/docs.test.ts fails when the page is stale.
 */
export function rolePermissionTable(): string {
  const head = `| Permission | ${ROLES.map((r) => ROLE_LABELS[r]).join(" | ")} |`;
  const rule = `|---|${ROLES.map(() => ":-:").join("|")}|`;
  const rows = PERMISSIONS.map((p) => `| \`${p}\` | ${ROLES.map((r) => (ROLE_PERMISSIONS[r].has(p) ? "✓" : "")).join(" | ")} |`);
  return [head, rule, ...rows].join("\n");
}

export function procedureTable(): string {
  const rows = PROCEDURES.map((p) => {
    const access = p.access === "none" || p.access === "session" ? `*${p.access}*` : `\`${p.access}\``;
    return `| \`${procedureKey(p)}\` | ${access} | ${p.mutates ? "yes" : ""} | ${p.description.replace(/\|/g, "\\|")} |`;
  });
  return ["| Procedure | Access | Writes | What it does |", "|---|---|:-:|---|", ...rows].join("\n");
}

export const GENERATED_SECTIONS = { permissions: rolePermissionTable, procedures: procedureTable } as const;

const markers = (name: string) => ({ start: `<!-- ${name}:start -->\n`, end: `<!-- ${name}:end -->` });

/** The text between a section's markers (without the newline before the end marker). */
export function section(readme: string, name: string): string | undefined {
  const { start, end } = markers(name);
  const i = readme.indexOf(start);
  const j = readme.indexOf(end);
  if (i < 0 || j < i + start.length) return undefined;
  return readme.slice(i + start.length, j).replace(/\n$/, "");
}

export function withSection(readme: string, name: string, body: string): string {
  const { start, end } = markers(name);
  const i = readme.indexOf(start);
  const j = readme.indexOf(end);
  if (i < 0 || j < i + start.length) throw new Error(`The page has no ${start.trim()} … ${end} markers`);
  return `${readme.slice(0, i + start.length)}${body}\n${readme.slice(j)}`;
}
