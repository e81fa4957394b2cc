import { describe, expect, it } from "vitest";
import { baseEnvSchema, EnvError, parseEnv } from "./env";

const base = { DATABASE_URL: "postgres://app_user:x@127.0.0.1:5432/db" };

describe("DB_CONNECT_TIMEOUT_MS", () => {
  it("defaults to 5000 ms and reads a string binding as a number", () => {
    expect(parseEnv(baseEnvSchema, { ...base }).DB_CONNECT_TIMEOUT_MS).toBe(5_000);
    expect(parseEnv(baseEnvSchema, { ...base, DB_CONNECT_TIMEOUT_MS: "200" }).DB_CONNECT_TIMEOUT_MS).toBe(200);
  });

  it("refuses values that are not whole milliseconds in 50..60000, naming the variable", () => {
    for (const bad of ["", "abc", "1.5", "10", "600000"]) {
      expect(() => parseEnv(baseEnvSchema, { ...base, DB_CONNECT_TIMEOUT_MS: bad }), bad).toThrow(EnvError);
      expect(() => parseEnv(baseEnvSchema, { ...base, DB_CONNECT_TIMEOUT_MS: bad }), bad).toThrow(/DB_CONNECT_TIMEOUT_MS/);
    }
  });
});
