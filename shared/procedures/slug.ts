import { z } from "zod";

/** URL handles for products and pages: lowercase letters, digits and single hyphens, 1-100 chars. */
export const HANDLE = /^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$/;
export const handleSchema = z
  .string()
  .regex(HANDLE, "Use lowercase letters, digits and hyphens (for example summer-kurta)");

export function handleFrom(title: string): string {
  const base = title
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 90)
    .replace(/-+$/g, "");
  return base || "item";
}

/** The first of `base`, `base-2`, `base-3`... that is not in `taken`. */
export function firstFreeHandle(base: string, taken: readonly string[]): string {
  const used = new Set(taken);
  if (!used.has(base)) return base;
  for (let n = 2; ; n++) {
    const candidate = `${base}-${n}`;
    if (!used.has(candidate)) return candidate;
  }
}
