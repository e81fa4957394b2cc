import { describe, expect, it } from "vitest";
import { sha256Hex } from "#shared/core/tokens";
import { appWebhookConfigFromEnv, deriveAppSecret, newAppSecret, secretOf, signatureHeader } from "./secrets";

const ROOT = "a-root-secret-of-thirty-two-chars-or-more";
const APP = "5d0c7c56-6f0b-4c1a-9d7e-2b8a31f0e0aa";

describe("app webhook configuration", () => {
  it("needs APP_WEBHOOK_ROOT_SECRET of 32 characters, and refuses the development value in production", () => {
    expect(() => appWebhookConfigFromEnv({ APP_ENV: "production" })).toThrow(/APP_WEBHOOK_ROOT_SECRET: is required/);
    expect(() => appWebhookConfigFromEnv({ APP_WEBHOOK_ROOT_SECRET: "short" })).toThrow(/APP_WEBHOOK_ROOT_SECRET: must be at least 32/);
    expect(() => appWebhookConfigFromEnv({ APP_WEBHOOK_ROOT_SECRET: "local-app-webhook-development-root-secret" })).toThrow(/development value/);
    expect(appWebhookConfigFromEnv({ APP_WEBHOOK_ROOT_SECRET: ROOT })).toEqual({ rootSecret: ROOT, allowLocalUrls: false });
    expect(appWebhookConfigFromEnv({ APP_ENV: "development", APP_WEBHOOK_ROOT_SECRET: "local-app-webhook-development-root-secret" }).allowLocalUrls).toBe(true);
  });
});

describe("app signing secrets", () => {
  it("are derived, never stored: the record holds a version, a salt and the secret's SHA-256 only", async () => {
    const { secret, record, hint } = await newAppSecret(ROOT, APP, 1);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(hint).toBe(secret.slice(-4));
    expect(record.version).toBe(1);
    expect(record.hash).toBe(await sha256Hex(secret));
    expect(JSON.stringify(record)).not.toContain(secret.slice(6));
    expect(await deriveAppSecret(ROOT, APP, 1, record.salt)).toBe(secret);
    expect(await secretOf(ROOT, APP, record)).toBe(secret);
  });

  it("differ per app, version and salt, and need both the root and the record", async () => {
    const { secret, record } = await newAppSecret(ROOT, APP, 1);
    expect(await deriveAppSecret(ROOT, APP, 2, record.salt)).not.toBe(secret);
    expect(await deriveAppSecret(ROOT, crypto.randomUUID(), 1, record.salt)).not.toBe(secret);
    expect((await newAppSecret(ROOT, APP, 1)).secret).not.toBe(secret);
    // Another root (the variable changed): the record no longer checks, so nothing is signed with a wrong key.
    expect(await secretOf(`${ROOT}-rotated`, APP, record)).toBeNull();
  });

  it("sign `<timestamp>.<body>` with each given secret", async () => {
    const header = await signatureHeader(["s1", "s2"], 1_700_000_000, '{"a":1}');
    expect(header).toMatch(/^v1=[0-9a-f]{64}, v1=[0-9a-f]{64}$/);
    expect(await signatureHeader(["s1"], 1_700_000_000, '{"a":1}')).toBe(header.split(", ")[0]);
  });
});
