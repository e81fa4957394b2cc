/**
 * The slice of RFC 8941 structured fields that UCP's headers use: a dictionary whose members are a
 * string (`UCP-Agent: profile="https://…"`), a byte sequence (`Signature: sig1=:…:`, `Content-Digest`) or an
 * inner list with parameters (`Signature-Input: sig1=("@method" …);keyid="k";created=1`). Anything else in
 * a member is kept as its raw text and refused by whoever reads it.
 */

export type Member =
  | { kind: "string"; value: string; raw: string }
  | { kind: "bytes"; value: Uint8Array; raw: string }
  | { kind: "list"; items: string[]; params: Record<string, string | number | boolean>; raw: string }
  | { kind: "other"; raw: string };

const KEY = /^[a-z*][a-z0-9_\-.*]*$/;

/** Splits a dictionary at its top-level commas (outside strings, byte sequences and inner lists). */
function members(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let colon = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ":") colon = !colon;
    else if (!colon && c === "(") depth++;
    else if (!colon && c === ")") depth--;
    else if (!colon && depth === 0 && c === ",") {
      out.push(text.slice(start, i));
      start = i + 1;
    }
  }
  out.push(text.slice(start));
  return out.map((m) => m.trim()).filter((m) => m !== "");
}

function decodeBase64(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return undefined;
  try {
    return Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));
  } catch {
    return undefined;
  }
}

function parseString(text: string): string | undefined {
  const m = /^"((?:[^"\\]|\\["\\])*)"$/.exec(text);
  return m ? m[1]!.replace(/\\(["\\])/g, "$1") : undefined;
}

function parseParams(text: string): Record<string, string | number | boolean> | undefined {
  const params: Record<string, string | number | boolean> = {};
  const re = /;\s*([a-z*][a-z0-9_\-.*]*)(?:=("(?:[^"\\]|\\["\\])*"|-?\d{1,15}|\?[01]|[A-Za-z*][A-Za-z0-9_\-.:/%*]*))?/y;
  let at = 0;
  while (at < text.length) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (!m) return undefined;
    const [, name, value] = m;
    params[name!] = value === undefined ? true : value.startsWith('"') ? parseString(value)! : /^-?\d/.test(value) ? Number(value) : value === "?1" ? true : value === "?0" ? false : value;
    at = re.lastIndex;
  }
  return params;
}

function parseMember(raw: string): Member {
  if (raw.startsWith('"')) {
    const m = /^("(?:[^"\\]|\\["\\])*")(.*)$/.exec(raw);
    const value = m ? parseString(m[1]!) : undefined;
    if (m && value !== undefined && parseParams(m[2]!) !== undefined) return { kind: "string", value, raw };
  }
  if (raw.startsWith(":")) {
    const m = /^:([^:]*):(.*)$/.exec(raw);
    const bytes = m ? decodeBase64(m[1]!) : undefined;
    if (m && bytes && parseParams(m[2]!) !== undefined) return { kind: "bytes", value: bytes, raw };
  }
  if (raw.startsWith("(")) {
    const close = raw.indexOf(")");
    if (close > 0) {
      const inner = raw.slice(1, close).trim();
      const items: string[] = [];
      const re = /"((?:[^"\\]|\\["\\])*)"(;[^\s]*)?\s*/y;
      let at = 0;
      let ok = true;
      while (at < inner.length) {
        re.lastIndex = at;
        const m = re.exec(inner);
        if (!m) {
          ok = false;
          break;
        }
        // A component with parameters (`"signature-agent";key="sig1"`) keeps them, so coverage checks see them.
        items.push(m[2] ? `${m[1]}${m[2]}` : m[1]!);
        at = re.lastIndex;
      }
      const params = parseParams(raw.slice(close + 1));
      if (ok && params) return { kind: "list", items, params, raw };
    }
  }
  return { kind: "other", raw };
}

/** The dictionary's members by key; undefined when the header is absent or not a dictionary. */
export function parseDictionary(header: string | null | undefined): Map<string, Member> | undefined {
  if (header === null || header === undefined || header.length > 8192) return undefined;
  const out = new Map<string, Member>();
  for (const part of members(header)) {
    const eq = part.indexOf("=");
    if (eq <= 0) return undefined;
    const key = part.slice(0, eq).trim();
    if (!KEY.test(key)) return undefined;
    out.set(key, parseMember(part.slice(eq + 1).trim()));
  }
  return out;
}

export const sfString = (value: string): string => `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
