import fs from "node:fs";
import path from "node:path";
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
  start(db: { databaseUrl: string; wsProxy: string }): Promise<W>;
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

  beforeAll(async () => {
    try {
      const binary = await findChromium(); // no Chromium: fail at once, with the hint, before starting anything
      console.log(`[browser] Chromium from ${binary.source}`);
      const [b, w] = await Promise.allSettled([launchChromium(binary), options.start({ databaseUrl: inject("databaseUrl"), wsProxy: inject("wsProxy") })]);
      if (b.status === "fulfilled") browser = b.value;
      if (w.status === "fulfilled") worker = w.value;
      if (b.status === "rejected") throw b.reason;
      if (w.status === "rejected") throw w.reason;
      baseURL = options.baseUrl ? options.baseUrl(worker!.url) : worker!.url;
      context = await browser!.newContext({ baseURL, viewport: options.viewport });
      page = await context.newPage();
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
      p.setDefaultTimeout(5_000);
      p.setDefaultNavigationTimeout(10_000);
      return p;
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
        try {
          await fn();
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

/** Signs in through the admin's form; a refused or failed sign-in fails here with what the page said. */
export async function signIn(page: Page, email: string, password: string, adminUrl = ""): Promise<void> {
  await page.goto(`${adminUrl}/login`);
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
export async function checkOutAndPay(page: Page, buyer: Buyer): Promise<URL> {
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
  await Promise.all([page.waitForURL((u) => u.pathname.startsWith("/orders/") && u.searchParams.has("k")), page.click("button[value=pay]")]);
  return new URL(page.url());
}
