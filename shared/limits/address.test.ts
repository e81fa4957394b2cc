import { describe, expect, it } from "vitest";
import { clientAddress, clientNetwork, clientOf } from "./address";

describe("the client address the limiters count", () => {
  it("keeps an IPv4 address; an IPv4-mapped IPv6 address is its IPv4 address", () => {
    expect(clientAddress("203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress(" 198.51.100.1 ")).toBe("198.51.100.1");
    expect(clientAddress("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(clientAddress("::ffff:cb00:7109")).toBe("203.0.113.9");
  });

  it("counts an IPv6 address by its /64: every address of one line is one budget", () => {
    const net = "2001:db8:85a3:7::/64";
    for (const a of ["2001:db8:85a3:7::1", "2001:0db8:85a3:0007:ffff:ffff:ffff:ffff", "2001:DB8:85A3:7:0:0:0:2", "2001:db8:85a3:7::192.0.2.1"]) {
      expect(clientAddress(a), a).toBe(net);
    }
    expect(clientAddress("2001:db8:85a3:8::1")).toBe("2001:db8:85a3:8::/64");
    expect(clientAddress("::1")).toBe("0:0:0:0::/64");
  });

  it("anything else is one shared 'unknown' budget", () => {
    for (const junk of [undefined, null, "", "unknown", "256.1.1.1", "1.2.3", "1:2:3", "1::2::3", "2001:db8::g", "1:2:3:4:5:6:7:8:9", `${"1:".repeat(30)}1`, "203.0.113.9, 10.0.0.1"]) {
      expect(clientAddress(junk), String(junk)).toBe("unknown");
    }
  });

  it("an IPv6 address also names its /48 (a tunnel broker's free allocation); IPv4 and anything else name none", () => {
    expect(clientNetwork("2001:db8:85a3:7::1")).toBe("2001:db8:85a3::/48");
    expect(clientNetwork("2001:db8:85a3:ffff:1:2:3:4")).toBe("2001:db8:85a3::/48");
    expect(clientNetwork("2001:db8:85a4::1")).toBe("2001:db8:85a4::/48");
    for (const none of ["203.0.113.9", "::ffff:203.0.113.9", undefined, "junk"]) expect(clientNetwork(none), String(none)).toBeNull();
    expect(clientOf("2001:db8:85a3:7::1")).toEqual({ address: "2001:db8:85a3:7::/64", network: "2001:db8:85a3::/48" });
    expect(clientOf("203.0.113.9")).toEqual({ address: "203.0.113.9", network: null });
  });
});
