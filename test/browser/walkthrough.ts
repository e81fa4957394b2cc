import fs from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { AxeResults } from "axe-core";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, inject, it } from "vitest";
import { findChromium, launchChromium } from "./chromium";
import { SCREENSHOT_DIR, type AdminWorker } from "./support";

/**
 * One browser walkthrough: Chromium and a Worker under `wrangler dev` started together before the
 * steps, one page shared by every step in order, screenshots of failing steps (and of each step when
 * asked) in .data/screenshots/. Set-up failures are kept and thrown by the first step rather than by
 * beforeAll, so they count as failed tests (vitest would report the steps as skipped otherwise).
 */
export interface WalkthroughOptions<W extends AdminWorker> {
  /** Starts the Worker(s) the steps drive. */
  start(db: { databaseUrl: string; wsProxy: string; ownerUrl?: string }): Promise<W>;
  viewport: { width: number; height: number };
  /** The page's base URL from the Worker's (e.g. a store's hostname instead of 127.0.0.1). */
  baseUrl?(workerUrl: string): string;
  /** Screenshot names start with this. */
  prefix?: string;
  /** Keep a screenshot of every step, not only of failing ones. */
  shootEachStep?: boolean;
}

export interface Walkthrough<W extends AdminWorker> {
  readonly page: Page;
  readonly worker: W;
  screenshot(name: string): Promise<string>;
  step(name: string, slug: string, fn: () => Promise<void>): void;
  /** A second, separate browser (its own cookies) on the same base URL, e.g. for someone accepting an invitation. */
  otherBrowser(): Promise<Page>;
  /**
   * axe on the page shown now (the walkthrough's page unless another is given), unless that page has loaded
   * nothing since its last check: fails with its violations (see `expectAccessible`). Each step ends with
   * one on the page it leaves; a step that moves on from a page calls it there first, since a page loaded
   * during a step and left unchecked fails the step.
   */
  check(other?: Page): Promise<void>;
}

export function walkthrough<W extends AdminWorker>(options: WalkthroughOptions<W>): Walkthrough<W> {
  let browser: Browser | undefined;
  let context: BrowserContext | undefined;
  let page: Page | undefined;
  let worker: W | undefined;
  let baseURL: string | undefined;
  const others: BrowserContext[] = [];
  let setupError: unknown;
  let reported = false;
  // Each page's documents loaded since axe last looked at it (by address), and those left unchecked.
  const loaded = new Map<Page, string[]>();
  let unchecked: string[] = [];
  const checked = new Set<string>();
  const track = (p: Page) => {
    loaded.set(p, []);
    p.on("domcontentloaded", () => loaded.get(p)?.push(p.url()));
    p.on("close", () => loaded.delete(p));
  };
  /** axe looks at the Workers' own pages (by port), not at an address nothing of ours answers (an OAuth client's callback). */
  const ours = (url: string) => {
    const ports = [worker?.url, (worker as { admin?: AdminWorker } | undefined)?.admin?.url].filter((u) => u !== undefined).map((u) => new URL(u).port);
    return /^https?:/.test(url) && ports.includes(new URL(url).port);
  };

  beforeAll(async () => {
    try {
      const binary = await findChromium(); // no Chromium: fail at once, with the hint, before starting anything
      console.log(`[browser] Chromium from ${binary.source}`);
      const [b, w] = await Promise.allSettled([launchChromium(binary), options.start({ databaseUrl: inject("databaseUrl"), wsProxy: inject("wsProxy"), ownerUrl: inject("ownerDatabaseUrl") })]);
      if (b.status === "fulfilled") browser = b.value;
      if (w.status === "fulfilled") worker = w.value;
      if (b.status === "rejected") throw b.reason;
      if (w.status === "rejected") throw w.reason;
      baseURL = options.baseUrl ? options.baseUrl(worker!.url) : worker!.url;
      context = await browser!.newContext({ baseURL, viewport: options.viewport });
      page = await context.newPage();
      track(page);
      // Local pages answer in milliseconds: short waits keep a failing step (and those after it) quick.
      page.setDefaultTimeout(5_000);
      page.setDefaultNavigationTimeout(10_000);
      fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
    } catch (e) {
      setupError = e;
    }
  }, 90_000);

  afterAll(async () => {
    for (const other of others) await other.close().catch(() => {});
    await context?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await worker?.stop();
  }, 30_000);

  const session: Walkthrough<W> = {
    get page() {
      return page!;
    },
    get worker() {
      return worker!;
    },
    async otherBrowser() {
      const other = await browser!.newContext({ baseURL, viewport: options.viewport });
      others.push(other);
      const p = await other.newPage();
      track(p);
      p.setDefaultTimeout(5_000);
      p.setDefaultNavigationTimeout(10_000);
      return p;
    },
    async check(other) {
      const p = other ?? page!;
      const since = loaded.get(p);
      // A page of the walkthrough that loaded nothing since its last check is not checked again.
      if (since?.length === 0) return;
      // An address checked before counts (a page reloaded while waiting, the sign-in form of a second sign-in).
      unchecked.push(...(since ?? []).slice(0, -1).filter((url) => !checked.has(url) && url !== p.url() && ours(url)));
      if (since) since.length = 0;
      checked.add(p.url());
      if (ours(p.url())) await expectAccessible(p);
    },
    async screenshot(name) {
      const file = path.join(SCREENSHOT_DIR, `${options.prefix ?? ""}${name}.png`);
      await page!.screenshot({ path: file, fullPage: true });
      return file;
    },
    step(name, slug, fn) {
      it(name, async () => {
        if (setupError) {
          if (reported) throw new Error("Not run: the walkthrough's set-up failed (see the first step's error).");
          reported = true;
          throw setupError;
        }
        // What a failed step before this one loaded is its own business.
        for (const since of loaded.values()) since.length = 0;
        unchecked = [];
        try {
          await fn();
          for (const [p, since] of loaded) if (since.length) await session.check(p);
          const missed = unchecked;
          unchecked = [];
          if (missed.length) throw new Error(`Pages this step loaded and left without an accessibility check (call check() on each before moving on):\n  ${[...new Set(missed)].join("\n  ")}`);
          if (options.shootEachStep) await session.screenshot(slug);
        } catch (e) {
          const shot = await session.screenshot(`failed-${slug}`).catch(() => "(none)");
          console.error(`[browser] step "${name}" failed at ${page?.url()}; screenshot ${shot}\n[worker output]\n${worker?.output() ?? ""}`);
          throw e;
        }
      });
    },
  };
  return session;
}

const AXE_SOURCE = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
/** What every page must pass: WCAG 2.1 A and AA, and axe's best practices (landmarks, heading order, one h1). */
const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"];

/**
 * Runs axe-core in the page and fails with each violation: rule, impact, the elements (CSS selectors, at
 * most five per rule) and what to do. axe's source is evaluated through the DevTools protocol, which the
 * pages' Content-Security-Policy does not govern, so the pages are checked under their real policy. A
 * sandboxed page (no scripts run there: an email's HTML part) is checked as a copy of its markup in a
 * blank page of the same browser, without the rules for a whole site's page (one main landmark, one h1,
 * everything in landmarks), which a mail client's message does not follow.
 */
export async function expectAccessible(page: Page): Promise<void> {
  await page.waitForLoadState("load");
  if ((await page.evaluate(() => window.origin)) === "null") {
    const copy = await page.context().newPage();
    try {
      await copy.setContent(await page.content());
      return await expectAccessibleAt(copy, page.url(), ["landmark-one-main", "page-has-heading-one", "region"]);
    } finally {
      await copy.close();
    }
  }
  await expectAccessibleAt(page, page.url());
}

/** What axe found, per rule, in the words the failure message needs. */
type Finding = { id: string; impact: string | null | undefined; help: string; url: string; targets: string[]; first: string };

/**
 * Every rule of AXE_TAGS but the skipped ones in the page's light scheme, then colour contrast again in its
 * dark scheme (the pages follow prefers-color-scheme, and a colour that reads on white can vanish on black).
 */
async function expectAccessibleAt(page: Page, url: string, skipped: string[] = []): Promise<void> {
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE_SOURCE);
  const light = await runAxe(page, { runOnly: { type: "tag", values: AXE_TAGS }, rules: Object.fromEntries(skipped.map((id) => [id, { enabled: false }])) });
  await page.emulateMedia({ colorScheme: "dark" });
  let dark: Finding[];
  try {
    dark = await runAxe(page, { runOnly: { type: "rule", values: ["color-contrast"] } });
  } finally {
    await page.emulateMedia({ colorScheme: "light" });
  }
  const found = [...light, ...dark.map((v) => ({ ...v, id: `${v.id} in the dark scheme` }))];
  if (found.length === 0) return;
  const lines = found.map((v) => {
    const shown = v.targets.slice(0, 5).join(", ") + (v.targets.length > 5 ? ` and ${v.targets.length - 5} more` : "");
    return `- ${v.id} (${v.impact ?? "no impact given"}, ${v.targets.length} element${v.targets.length === 1 ? "" : "s"}): ${v.help}\n    at ${shown}\n    first: ${v.first}\n    ${v.url}`;
  });
  throw new Error(`axe found ${found.length} accessibility rule${found.length === 1 ? "" : "s"} broken on ${url}:\n${lines.join("\n")}`);
}

function runAxe(page: Page, options: object): Promise<Finding[]> {
  return page.evaluate(async (options) => {
    const { axe } = window as unknown as { axe: { run(context: Document, options: object): Promise<AxeResults> } };
    const results = await axe.run(document, { ...options, resultTypes: ["violations"] });
    return results.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      url: v.helpUrl,
      targets: v.nodes.map((n) => n.target.join(" ")),
      // The first element's finding in axe's words (for contrast: the two colours and the ratio).
      first: [...v.nodes[0]!.any, ...v.nodes[0]!.all, ...v.nodes[0]!.none].map((c) => c.message).find(Boolean) ?? "",
    }));
  }, options);
}

/**
 * Signs in through the admin's form; a refused or failed sign-in fails here with what the page said.
 * `check` (the walkthrough's) looks at the form before it is sent.
 */
export async function signIn(page: Page, email: string, password: string, adminUrl = "", check?: (p: Page) => Promise<void>): Promise<void> {
  await page.goto(`${adminUrl}/login`);
  await check?.(page);
  await page.fill("input[name=email]", email);
  await page.fill("input[name=password]", password);
  const answer = page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/login");
  await page.click("form[action='/login'] button[type=submit]");
  const response = await answer;
  if (response.status() !== 303) {
    await page.waitForLoadState();
    const said = (await page.locator("body").innerText()).replace(/\s+/g, " ").slice(0, 300);
    throw new Error(`Signing in as ${email}: POST /login answered ${response.status()}, not a 303 redirect. The page says: ${said}`);
  }
  await page.waitForURL((u) => u.pathname !== "/login");
}

/** Who checks out on the storefront's form (the fields a shopper types). */
export interface Buyer {
  email: string;
  phone?: string;
  name: string;
  line1: string;
  city: string;
  postalCode: string;
  state: string;
  acceptsMarketing?: boolean;
}

/**
 * On the storefront's checkout page: fills the form for a gateway payment, places the order and pays on the
 * local gateway's page; waits for the order page (its URL carries the order's key).
 */
export async function checkOutAndPay(page: Page, buyer: Buyer, check?: (p: Page) => Promise<void>): Promise<URL> {
  await check?.(page);
  await page.fill("#email", buyer.email);
  if (buyer.phone) await page.fill("#phone", buyer.phone);
  await page.fill("#shippingAddress-name", buyer.name);
  await page.fill("#shippingAddress-line1", buyer.line1);
  await page.fill("#shippingAddress-city", buyer.city);
  await page.fill("#shippingAddress-postalCode", buyer.postalCode);
  await page.selectOption("#shippingAddress-state", buyer.state);
  await page.check("input[name=paymentMethod][value=gateway]");
  if (buyer.acceptsMarketing) await page.check("input[name=acceptsMarketing]");
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith("/-gateway/pay/")), page.click("form[action='/checkout'] button[type=submit]")]);
  await check?.(page);
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith("/orders/") && u.searchParams.has("k")), page.click("button[value=pay]")]);
  return new URL(page.url());
}
