/**
 * The client's address as the limiters count it (`cf-connecting-ip`, which Cloudflare sets on every request):
 * an IPv4 address as it is, an IPv6 address by its /64 network. One subscriber line or one server is handed
 * a whole /64, so counting single IPv6 addresses would give a script 2^64 budgets. An IPv4-mapped IPv6
 * address counts as its IPv4 address. Anything else (no header: a local run) is `unknown`, one shared budget.
 */
export function clientAddress(header: string | null | undefined): string {
  const parsed = parse(header);
  if (parsed.v4) return parsed.v4.join(".");
  return parsed.v6 ? prefix(parsed.v6, 4, 64) : "unknown";
}

/**
 * The IPv6 /48 a client's /64 lies in, counted as a second key with higher numbers (decision 0019): a
 * tunnel broker hands anyone a free /48, 65 536 /64s, so a /64 alone would give one person that many
 * budgets. Null for an IPv4 address (counted whole already, as a carrier's NAT shares it) and for none.
 */
export function clientNetwork(header: string | null | undefined): string | null {
  const { v6 } = parse(header);
  return v6 ? prefix(v6, 3, 48) : null;
}

/** An IPv6 /48 is counted with this many times an address's numbers: a carrier puts many subscribers' /64s in one. */
export const NETWORK_FACTOR = 4;

/** The client as the door keys count it: its address and, for IPv6, its /48. */
export interface Client {
  address: string;
  network: string | null;
}

export const clientOf = (header: string | null | undefined): Client => ({ address: clientAddress(header), network: clientNetwork(header) });

function parse(header: string | null | undefined): { v4?: number[]; v6?: number[] } {
  const text = (header ?? "").trim();
  const v4 = ipv4(text);
  if (v4) return { v4 };
  const groups = ipv6(text);
  if (!groups) return {};
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return { v4: [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff] };
  }
  return { v6: groups };
}

/** "2001:db8:85a3:7::/64": the first `groups` groups of an IPv6 address and the prefix length. */
const prefix = (groups: number[], count: number, bits: number) =>
  `${groups
    .slice(0, count)
    .map((g) => g.toString(16))
    .join(":")}::/${bits}`;

function ipv4(text: string): number[] | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((p) => p <= 255) ? parts : null;
}

/** The eight 16-bit groups of an IPv6 address (`::` and a trailing dotted IPv4 part allowed), or null. */
function ipv6(text: string): number[] | null {
  if (text.length > 45 || !/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return null;
  let hex = text;
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    const v4 = ipv4(tail);
    if (!v4) return null;
    hex = `${text.slice(0, lastColon + 1)}${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = hex.split("::");
  if (halves.length > 2) return null;
  const side = (s: string | undefined) => (s ? s.split(":") : []);
  const left = side(halves[0]);
  const right = side(halves[1]);
  const written = [...left, ...right];
  if (!written.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return null;
  if (halves.length === 1 ? written.length !== 8 : written.length > 7) return null;
  const zeros = Array<string>(8 - written.length).fill("0");
  return [...left, ...zeros, ...right].map((g) => parseInt(g, 16));
}
