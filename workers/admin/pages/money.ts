/**
 * Money typed in a form, in the store's currency (rupees: `1250.50`, `1,250.5`, `₹99`), as exact minor units:
 * the decimal string is read digit by digit, never through a float. Blank is `null`.
 */
export function minorUnitsOf(text: string | undefined, currency: string): { minor: number | null } | { error: string } {
  const digits = new Intl.NumberFormat("en-IN", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  const clean = (text ?? "").trim().replace(/^₹\s*/, "").replace(/,/g, "");
  if (clean === "") return { minor: null };
  const match = /^(\d{1,12})(?:\.(\d*))?$/.exec(clean);
  if (!match) return { error: `Enter an amount such as 1250.50 (${currency}).` };
  const fraction = match[2] ?? "";
  if (fraction.length > digits) return { error: `Use at most ${digits} decimal places.` };
  const minor = Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
  if (!Number.isSafeInteger(minor)) return { error: "This amount is too large." };
  return { minor };
}

/** Minor units as the form shows them again: `125050` → `1250.50`. */
export function amountText(minor: number | null | undefined, currency: string): string {
  if (minor === null || minor === undefined) return "";
  const digits = new Intl.NumberFormat("en-IN", { style: "currency", currency }).resolvedOptions().maximumFractionDigits ?? 2;
  if (digits === 0) return String(minor);
  const s = String(minor).padStart(digits + 1, "0");
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}
