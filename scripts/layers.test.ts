import { execFile } from "node:child_process";
import { mkdtemp, mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AREAS, FLOORS } from "../.dependency-cruiser.mjs";

// The layer check `npm test` runs (`npm run layers`: dependency-cruiser with .dependency-cruiser.mjs), tried on a
// small house of its own: every kind of wrong import must be refused with the rule that names it, and a house
// that keeps to its floors must pass. Then the real tree, so a wrong import fails the suite here as well.

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, "..");
const cli = join(repo, "node_modules/dependency-cruiser/bin/dependency-cruise.mjs");
const config = join(repo, ".dependency-cruiser.mjs");

async function check(cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [cli, "shared", "workers", "--config", config, "--output-type", "err"], { cwd, timeout: 60_000 });
    return { ok: true, output: stdout };
  } catch (e) {
    const failed = e as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

async function house(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "layers-"));
  const all = {
    "tsconfig.json": JSON.stringify({ compilerOptions: { module: "ESNext", moduleResolution: "Bundler", strict: true } }),
    "package.json": JSON.stringify({ name: "house", type: "module", imports: { "#shared/*": "./shared/*.ts" } }),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const made: string[] = [];
afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true });
});

describe("the layer check", () => {
  let refused: { ok: boolean; output: string };
  beforeAll(async () => {
    const dir = await house({
      // Upward: core imports a domain area, a domain area imports the procedures above it.
      "shared/core/money.ts": 'import { total } from "../orders/total";\nexport const money = total;\n',
      "shared/orders/total.ts": 'import { list } from "#shared/procedures/list";\nexport const total = list.length;\n',
      "shared/procedures/list.ts": "export const list: number[] = [];\n",
      // Sideways: an area imports one it is not allowed to (shipping may import rules only).
      "shared/shipping/book.ts": 'import { offer } from "../marketing/offer";\nexport const book = offer;\n',
      "shared/marketing/offer.ts": "export const offer = 1;\n",
      // A cycle inside one folder, through type-only imports.
      "shared/auth/a.ts": 'import type { B } from "./b";\nexport type A = { b?: B };\n',
      "shared/auth/b.ts": 'import type { A } from "./a";\nexport type B = { a?: A };\n',
      // A door reaching into another Worker; product code importing a test fake; a folder on no floor.
      "workers/admin/page.ts": 'import { shop } from "../storefront/shop";\nexport const page = shop;\n',
      "workers/storefront/shop.ts": "export const shop = 1;\n",
      "shared/apps/send.ts": 'import { fake } from "../../test/fakes/provider";\nexport const send = fake;\n',
      "test/fakes/provider.ts": "export const fake = 1;\n",
      "shared/misc/helper.ts": 'import { money } from "../core/money";\nexport const helper = money;\n',
    });
    made.push(dir);
    refused = await check(dir);
  });

  it("refuses an upward import, naming the floor's rule", () => {
    expect(refused.ok).toBe(false);
    expect(refused.output).toMatch(/error core-imports-only-below: shared\/core\/money\.ts → shared\/orders\/total\.ts/);
    expect(refused.output).toMatch(/error orders-imports-only-below: shared\/orders\/total\.ts → shared\/procedures\/list\.ts/);
  });

  it("refuses a sideways import between domain areas the table does not allow", () => {
    expect(refused.output).toMatch(/error shipping-imports-only-below: shared\/shipping\/book\.ts → shared\/marketing\/offer\.ts/);
  });

  it("refuses a cycle, even of type-only imports", () => {
    expect(refused.output).toMatch(/error no-cycle: shared\/auth\/(a|b)\.ts/);
  });

  it("refuses a Worker importing another Worker, product code importing test code, and a folder on no floor", () => {
    expect(refused.output).toMatch(/error admin-worker-imports-no-other-worker: workers\/admin\/page\.ts → workers\/storefront\/shop\.ts/);
    expect(refused.output).toMatch(/error product-imports-no-test-code: shared\/apps\/send\.ts → test\/fakes\/provider\.ts/);
    expect(refused.output).toMatch(/error shared-folder-on-no-floor: shared\/misc\/helper\.ts/);
  });

  it("passes a house whose imports run only downward", async () => {
    const dir = await house({
      "shared/core/money.ts": "export const money = 1;\n",
      "shared/db/rows.ts": 'import { money } from "../core/money";\nexport const rows = [money];\n',
      "shared/rules/status.ts": 'import { rows } from "#shared/db/rows";\nexport const status = rows;\n',
      "shared/shipping/book.ts": 'import { status } from "../rules/status";\nexport const book = status;\n',
      "shared/orders/total.ts": 'import { book } from "../shipping/book";\nexport const total = book;\n',
      "shared/procedures/list.ts": 'import { total } from "../orders/total";\nexport const list = total;\n',
      "workers/admin/page.ts": 'import { list } from "#shared/procedures/list";\nexport const page = list;\n',
    });
    made.push(dir);
    const passed = await check(dir);
    expect(passed.output).toMatch(/no dependency violations found/);
    expect(passed.ok).toBe(true);
  });

  it("places every folder of shared/ on exactly one floor, and the domain areas' table names only areas", async () => {
    const folders = (await readdir(join(repo, "shared"), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    const placed = FLOORS.flatMap((f) => f.holds);
    expect([...placed].sort()).toEqual([...folders].sort());
    expect(new Set(placed).size).toBe(placed.length);
    for (const allowed of Object.values(AREAS)) for (const area of allowed) expect(Object.keys(AREAS)).toContain(area);
  });

  it("finds no wrong import in this repository", async () => {
    const result = await check(repo);
    expect(result.output).toMatch(/no dependency violations found/);
    expect(result.ok).toBe(true);
  });
});
