import { expect } from "vitest";

async function sha256(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
  return `'sha256-${btoa(String.fromCharCode(...digest))}'`;
}

/** One directive of a Content-Security-Policy, as its list of sources. */
export function directive(csp: string, name: string): string[] | undefined {
  const found = csp.split(";").map((d) => d.trim().split(/\s+/)).find(([n]) => n === name);
  return found?.slice(1);
}

/**
 * Checks an HTML answer's security headers as a browser would apply them: nosniff, a referrer policy, a
 * CSP whose script-src and style-src allow no inline code except pieces listed by hash, every inline
 * `<script>` and `<style>` of the page among those hashes (so the page still works), no inline event
 * handler or style attribute (which hashes cannot allow), and the framing asked for. Answers the body.
 */
export async function expectSecureHtml(res: Response, framing: "none" | "self"): Promise<string> {
  expect(res.headers.get("content-type") ?? "").toMatch(/^text\/html/);
  expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  expect(["strict-origin-when-cross-origin", "same-origin", "no-referrer"]).toContain(res.headers.get("referrer-policy"));
  const csp = res.headers.get("content-security-policy") ?? "";
  expect(csp, "a Content-Security-Policy").not.toBe("");
  expect(csp).not.toContain("unsafe-inline");
  expect(csp).not.toContain("unsafe-eval");
  expect(directive(csp, "object-src")).toEqual(["'none'"]);
  expect(directive(csp, "base-uri")).toEqual(["'none'"]);
  expect(directive(csp, "frame-ancestors")).toEqual([framing === "none" ? "'none'" : "'self'"]);
  expect(res.headers.get("x-frame-options")).toBe(framing === "none" ? "DENY" : "SAMEORIGIN");
  const body = await res.text();
  for (const [tag, list] of [["script", "script-src"], ["style", "style-src"]] as const) {
    const allowed = directive(csp, list) ?? [];
    for (const m of body.matchAll(new RegExp(`<${tag}(\\s[^>]*)?>([\\s\\S]*?)</${tag}>`, "g"))) {
      if (/\ssrc=/.test(m[1] ?? "")) continue;
      // A data block (JSON-LD) is never run, so the policy does not apply to it; it must hold no markup.
      if (tag === "script" && /\stype="application\/ld\+json"/.test(m[1] ?? "")) {
        expect(m[2], "JSON-LD holds no markup").not.toMatch(/[<>]/);
        continue;
      }
      expect(allowed, `inline <${tag}> allowed by its hash`).toContain(await sha256(m[2]!));
    }
  }
  expect(body).not.toMatch(/<[^>]+\son[a-z]+=/i);
  expect(body).not.toMatch(/<[^>]+\sstyle=/i);
  return body;
}
