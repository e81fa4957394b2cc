import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "#shared/http/app";
import { jobDeps } from "#shared/jobs/run";
import { procedureServices, providerServices, providersOf, type Providers } from "./providers";

/** The Worker's provider services: built once per env, each provider's configuration read once and kept with its outcome. */
const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  throw new Error("expected a throw");
};

describe("the provider services of a Worker's env", () => {
  it("are built once per env object: the same services, the same person check, whoever asks", () => {
    const p = providersOf(env);
    expect(providersOf(env)).toBe(p);
    expect(p.challenge()).toBe(p.challenge());
    expect(providersOf({ ...env })).not.toBe(p);
    expect(Object.isFrozen(p)).toBe(true);
  });

  it("read every configuration when built: a variable changed afterwards changes nothing", async () => {
    const vars: Record<string, unknown> = { ...env };
    const p = providersOf(vars);
    vars["PAYMENT_GATEWAY"] = "stripe";
    vars["CHALLENGE"] = "recaptcha";
    vars["DOMAIN_DNS"] = "google";
    expect(p.gatewayConfig().provider).toBe("local");
    expect((await p.storeGateway(crypto.randomUUID())).provider).toBe("local");
    expect(p.challenge().widget.provider).toBe("local");
    expect(p.dnsConfig()).toEqual({ provider: "local" });
  });

  it("keep a wrong configuration's error for that provider's own uses, the same error every time", async () => {
    const p = providersOf({ ...env, PAYMENT_GATEWAY: "stripe", DOMAIN_ROUTER: "cloudflare" });
    const first = thrown(() => p.gatewayConfig());
    expect(first).toBeInstanceOf(Error);
    expect(String(first)).toMatch(/Payment gateway configuration: PAYMENT_GATEWAY/);
    expect(thrown(() => p.gatewayConfig())).toBe(first);
    await expect(p.storeGateway(crypto.randomUUID())).rejects.toBe(first);
    await expect(p.gateway(crypto.randomUUID())).rejects.toBe(first);
    expect(() => p.router()).toThrow(/Domain router configuration: CLOUDFLARE_ZONE_ID: is required/);
    // The others are untouched by it.
    expect((await p.storeCourier(crypto.randomUUID())).provider).toBe("local");
    expect(p.challenge().widget.provider).toBe("local");
    expect(p.appWebhooks().allowLocalUrls).toBe(true);
    expect(p.emailLinkSecret()).toEqual(expect.any(String));
    expect(p.dns().provider).toBe("local");
  });

  it("refuse the local adapters in production with the parsers' own messages", () => {
    const p = providersOf({ ...env, APP_ENV: "production" });
    expect(() => p.challenge()).toThrow("Challenge configuration: CHALLENGE: the local challenge is for development and tests only");
    expect(() => p.gatewayConfig()).toThrow("Payment gateway configuration: PAYMENT_GATEWAY: the local gateway is for development and tests only");
    expect(() => p.courierConfig()).toThrow("Courier configuration: COURIER: the local courier is for development and tests only");
    expect(() => p.mail(null as never)).toThrow("Mailer configuration: MAILER: the local mailbox is for development and tests only");
  });

  it("are what the app puts on every request's context and what the job runner hands its jobs", async () => {
    const app = createApp<Record<string, unknown>>({ service: "worker" });
    let seen: Providers | undefined;
    app.get("/seen", (c) => {
      seen = c.var.providers;
      return c.text("ok");
    });
    expect((await app.request("/seen", undefined, env)).status).toBe(200);
    expect(seen).toBe(providersOf(env));
    expect(jobDeps(env, "test").providers).toBe(providersOf(env));
  });

  it("give procedures only the gateway, the courier, the app webhooks and the UCP keys' root", () => {
    const p = providersOf(env);
    expect(procedureServices(p)).toEqual({ gateway: p.gateway, courier: p.courier, appWebhooks: p.appWebhooks, ucpSigning: p.ucpSigning });
    expect(Object.keys(providerServices(env)).sort()).toEqual(["appWebhooks", "courier", "gateway", "ucpSigning"]);
  });
});
