/**
 * Which Chromium the browser walkthrough drives, in this order: CHROMIUM_PATH, Debian's /usr/bin/chromium,
 * then the headless Chromium that the npm package @sparticuz/chromium ships (an optional dependency, for
 * linux-x64), unpacked once under .data/. playwright-core drives it; nothing is downloaded.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { ROOT } from "../../scripts/lib/config";

const NPM_CHROMIUM = "@sparticuz/chromium";
const DEBIAN_CHROMIUM = "/usr/bin/chromium";

export const CHROMIUM_INSTALL_HINT = `Chromium was not found, so the browser walkthrough cannot run.
On linux-x64, \`npm install\` brings one (the optional package ${NPM_CHROMIUM}): run it again without
--omit=optional / --no-optional. Elsewhere, point CHROMIUM_PATH at a Chromium or Chrome executable.`;

/** Keeps Chromium quiet on a closed network: no update checks, sync, or QUIC probes to the outside. */
const QUIET = ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"];

/**
 * Flags of the npm package's list (made for serverless hosts) the walkthrough must not take:
 * --single-process breaks a second browser context; the walkthrough's browser keeps the web's security rules.
 */
const REFUSED = new Set(["--single-process", "--disable-web-security", "--allow-running-insecure-content"]);

export interface ChromiumBinary {
  executablePath: string;
  /** Where it came from, for the log. */
  source: string;
  args: string[];
  env?: Record<string, string>;
}

const isExecutable = (file: string) => {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

function npmPackageDir(): string | null {
  const dir = path.join(ROOT, "node_modules", NPM_CHROMIUM);
  return process.platform === "linux" && process.arch === "x64" && fs.existsSync(path.join(dir, "package.json")) ? dir : null;
}

/**
 * Unpacks the package's Chromium (about 200 MB, once, about 1.5 s) into .data/chromium-<version>/. The
 * package unpacks into os.tmpdir(), so a child process does it with TMPDIR pointing at a staging folder,
 * which is renamed into place only when complete.
 */
function unpackNpmChromium(pkgDir: string): string {
  const { version } = JSON.parse(fs.readFileSync(path.join(pkgDir, "package.json"), "utf8")) as { version: string };
  const target = path.join(ROOT, ".data", `chromium-${version}`);
  if (fs.existsSync(path.join(target, "fonts.conf"))) return target;
  const staging = `${target}.partial-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  const script = `import c from "${NPM_CHROMIUM}"; process.stdout.write(await c.executablePath());`;
  const binary = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: ROOT,
    env: { ...process.env, TMPDIR: staging },
    encoding: "utf8",
  });
  if (binary !== path.join(staging, "chromium")) throw new Error(`${NPM_CHROMIUM} unpacked to ${binary}, not into ${staging}`);
  // Its own fonts.conf names Lambda's folders: name the bundled fonts (and the system's, if any) instead.
  fs.writeFileSync(
    path.join(staging, "fonts.conf"),
    `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
      `  <dir>${path.join(target, "fonts", "fonts")}</dir>\n  <dir>/usr/share/fonts</dir>\n` +
      `  <cachedir>${path.join(target, "fonts-cache")}</cachedir>\n</fontconfig>\n`,
  );
  try {
    fs.renameSync(staging, target);
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    if (!fs.existsSync(path.join(target, "fonts.conf"))) throw e; // else another run unpacked it first
  }
  return target;
}

async function npmChromium(pkgDir: string): Promise<ChromiumBinary> {
  const { default: packaged } = await import("@sparticuz/chromium");
  const dir = unpackNpmChromium(pkgDir);
  return {
    executablePath: path.join(dir, "chromium"),
    source: `${NPM_CHROMIUM} (${dir})`,
    args: packaged.args.filter((a) => !REFUSED.has(a)),
    env: { FONTCONFIG_FILE: path.join(dir, "fonts.conf") },
  };
}

/** Throws the install hint (the suite then fails and says why) when no Chromium can be had. */
export async function findChromium(): Promise<ChromiumBinary> {
  const fromEnv = process.env.CHROMIUM_PATH;
  if (fromEnv) {
    if (!isExecutable(fromEnv)) throw new Error(`CHROMIUM_PATH is set to ${fromEnv}, which is not an executable file.`);
    return { executablePath: fromEnv, source: "CHROMIUM_PATH", args: [] };
  }
  if (isExecutable(DEBIAN_CHROMIUM)) return { executablePath: DEBIAN_CHROMIUM, source: DEBIAN_CHROMIUM, args: [] };
  const pkgDir = npmPackageDir();
  if (pkgDir) return npmChromium(pkgDir);
  throw new Error(`${CHROMIUM_INSTALL_HINT}\n(looked at CHROMIUM_PATH, ${DEBIAN_CHROMIUM} and ${NPM_CHROMIUM})`);
}

const definedEnv = () => Object.fromEntries(Object.entries(process.env).filter((e): e is [string, string] => e[1] !== undefined));

export function launchChromium(binary: ChromiumBinary): Promise<Browser> {
  const args = [...new Set([...binary.args, ...QUIET, "--no-sandbox"])];
  return chromium.launch({
    executablePath: binary.executablePath,
    headless: true,
    args,
    ...(binary.env ? { env: { ...definedEnv(), ...binary.env } } : {}),
  });
}
