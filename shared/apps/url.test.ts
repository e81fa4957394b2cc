import { describe, expect, it } from "vitest";
import { appUrlProblem } from "./url";

/** Where webhooks may go (SSRF): production (strict) and development/test (loopback allowed). */
describe("app webhook URLs", () => {
  it.each([
    "https://hooks.example.com/commerce",
    "https://example.com",
    "https://hooks.example.com:443/x?token=1",
    "https://8.8.8.8/hook",
    "https://[2606:4700:4700::1111]/hook",
  ])("allows %s everywhere", (url) => {
    expect(appUrlProblem(url, false)).toBeUndefined();
    expect(appUrlProblem(url, true)).toBeUndefined();
  });

  it.each([
    ["http://hooks.example.com/x", /Only https/],
    ["ftp://hooks.example.com/x", /Only https/],
    ["not a url", /Not a URL/],
    ["https://user:pw@hooks.example.com/x", /user name or password/],
    ["https://hooks.example.com:8443/x", /port 443/],
    ["https://localhost/x", /loopback/],
    ["https://api.localhost/x", /loopback/],
    ["https://127.0.0.1/x", /loopback/],
    ["https://2130706433/x", /loopback/],
    ["https://0x7f.1/x", /loopback/],
    ["https://[::1]/x", /loopback/],
    ["https://10.1.2.3/x", /private/],
    ["https://172.16.0.1/x", /private/],
    ["https://192.168.1.10/x", /private/],
    ["https://169.254.169.254/latest/meta-data", /private/],
    ["https://100.64.0.1/x", /private/],
    ["https://0.0.0.0/x", /private/],
    ["https://224.0.0.1/x", /private/],
    ["https://[fe80::1]/x", /private/],
    ["https://[fd00::1]/x", /private/],
    ["https://[::ffff:10.0.0.1]/x", /private/],
    ["https://[::ffff:127.0.0.1]/x", /private/],
    ["https://[2001:db8::1]/x", /private/],
    ["https://intranet/x", /not a public domain/],
    ["https://printer.local/x", /not a public domain/],
    ["https://metadata.google.internal/x", /not a public domain/],
    [`https://example.com/${"a".repeat(2048)}`, /longer than 2048/],
  ])("refuses %s in production", (url, why) => {
    expect(appUrlProblem(url, false)).toMatch(why);
  });

  it("development and test allow http, any port and loopback, never private networks", () => {
    for (const url of ["http://localhost:9999/hook", "http://127.0.0.1:8789/x", "https://hooks.example.com:8443/x", "http://[::1]:3000/"]) {
      expect(appUrlProblem(url, true), url).toBeUndefined();
    }
    for (const url of ["http://10.0.0.5/x", "https://169.254.169.254/", "http://192.168.0.2:8080/", "https://[::ffff:127.0.0.1]/"]) {
      expect(appUrlProblem(url, true), url).toMatch(/private/);
    }
    expect(appUrlProblem("https://user@localhost/x", true)).toMatch(/user name/);
  });
});
