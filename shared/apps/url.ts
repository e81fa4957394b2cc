/**
 * Where an app's webhooks may go (SSRF): https on port 443 to a public host. With `allowLocal`
 * (APP_ENV development or test) http, any port and loopback hosts are allowed too, for a receiver on the
 * developer's machine; private, link-local and other special ranges stay refused everywhere. Checked when
 * an app is saved and again before every send. Hostnames are not resolved here: Workers' fetch cannot
 * reach private networks, and redirects are never followed (docs/apps.md).
 */

const ADVICE = "Use a public https URL such as https://example.com/webhooks";

// Names that never resolve to a public address.
const LOCAL_SUFFIXES = [".local", ".internal", ".localdomain", ".home.arpa", ".lan", ".intranet", ".corp", ".private"];

function ipv4(host: string): number[] | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return m ? m.slice(1).map(Number) : undefined;
}

function isLoopbackV4([a]: number[]): boolean {
  return a === 127;
}

/** Ranges that are not the public internet (RFC 6890 and friends), loopback excluded. */
function isSpecialV4([a, b, c]: number[]): boolean {
  if (a === undefined || b === undefined || c === undefined) return true;
  return (
    a === 0 ||
    a === 10 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 0 && (c === 0 || c === 2)) ||
    (a === 192 && b === 88 && c === 99) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    (a === 198 && b === 51 && c === 100) ||
    (a === 203 && b === 0 && c === 113) ||
    a >= 224
  );
}

/** The 8 hextets of an IPv6 literal (as the URL parser writes it, compressed, maybe with an IPv4 tail). */
function ipv6(host: string): number[] | undefined {
  if (!host.startsWith("[") || !host.endsWith("]")) return undefined;
  let text = host.slice(1, -1);
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = ipv4(v4[1]!) ?? [];
    if (a === undefined || b === undefined || c === undefined || d === undefined) return undefined;
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes("::") ? (text.split("::") as [string, string]) : [text, undefined];
  const part = (s: string) => (s ? s.split(":").map((h) => Number.parseInt(h, 16)) : []);
  const left = part(head);
  const right = tail === undefined ? [] : part(tail);
  const fill = tail === undefined ? [] : new Array<number>(8 - left.length - right.length).fill(0);
  const all = [...left, ...fill, ...right];
  return all.length === 8 && all.every((h) => Number.isInteger(h) && h >= 0 && h <= 0xffff) ? all : undefined;
}

const isLoopbackV6 = (h: number[]) => h.slice(0, 7).every((x) => x === 0) && h[7] === 1;

/** Only global unicast (2000::/3) outside documentation, 6to4 and Teredo, or a public mapped IPv4. */
function isSpecialV6(h: number[]): boolean {
  const [first = 0, second = 0] = h;
  if (h.slice(0, 5).every((x) => x === 0) && h[5] === 0xffff) return isSpecialV4([h[6]! >> 8, h[6]! & 0xff, h[7]! >> 8]) || isLoopbackV4([h[6]! >> 8]);
  if (first < 0x2000 || first > 0x3fff) return true;
  return (first === 0x2001 && (second === 0x0db8 || second === 0)) || first === 0x2002;
}

function hostProblem(host: string, allowLocal: boolean): string | undefined {
  const name = host.replace(/\.+$/, "");
  const v4 = ipv4(name);
  const v6 = ipv6(name);
  const loopback = name === "localhost" || name.endsWith(".localhost") || (v4 !== undefined && isLoopbackV4(v4)) || (v6 !== undefined && isLoopbackV6(v6));
  if (loopback) return allowLocal ? undefined : `The host is this machine (loopback). ${ADVICE}`;
  if ((v4 && isSpecialV4(v4)) || (v6 && isSpecialV6(v6)) || (name.startsWith("[") && !v6)) {
    return `The host is a private, link-local or reserved address. ${ADVICE}`;
  }
  if (!v4 && !v6 && (!name.includes(".") || LOCAL_SUFFIXES.some((s) => name.endsWith(s)))) {
    return `The host is not a public domain name. ${ADVICE}`;
  }
  return undefined;
}

/** Why this URL may not receive webhooks, or undefined when it may. */
export function appUrlProblem(raw: string, allowLocal: boolean): string | undefined {
  if (raw.length > 2048) return "The URL is longer than 2048 characters.";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `Not a URL. ${ADVICE}`;
  }
  if (url.protocol !== "https:" && !(allowLocal && url.protocol === "http:")) return `Only https URLs can receive webhooks. ${ADVICE}`;
  if (url.username || url.password) return "The URL must not contain a user name or password.";
  if (url.port && !allowLocal) return "Webhooks are sent to port 443 only: remove the port from the URL.";
  return hostProblem(url.hostname.toLowerCase(), allowLocal);
}
