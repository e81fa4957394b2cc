import type { Context, MiddlewareHandler } from "hono";
import type { FC } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { CHALLENGE_FIELD, type ChallengeWidget as Widget } from "#shared/challenge/challenge";
import { CHALLENGE_RETRY_SECONDS, challengeMessage, checkChallenge } from "#shared/challenge/check";
import { ChallengeWidget, type ChallengeAction } from "#shared/challenge/widget";
import { AppError } from "#shared/core/errors";
import { errorPage } from "#shared/http/html";
import { Page } from "#shared/http/page";
import { clientOf } from "#shared/limits/address";
import { challengeAhead, giveBackAll, passThrough, refusalMessage, type Counted, type DoorKeys, type DoorRefusal, type Passed } from "#shared/limits/doors";
import type { RateLimiter } from "#shared/limits/rate-limiter";
import { shopperKeys, wrongCodeKeys, type ShopperDoor } from "#shared/limits/shopper";
import { normaliseHostname } from "#shared/storefront/hosts";
import type { StorefrontEnv } from "./context";
import type { ShopRequest } from "./shop-env";

/**
 * The shopper's writes at the storefront's door (issue 20 items 1 and 9; docs/decisions/0019): each is
 * counted per client address and IPv6 /48, then per store where the door has a store key
 * (shared/limits/shopper.ts), before the hostname is looked up and before any database work, so a refused
 * request (429 with Retry-After: JSON under /api/, the error page for a form) costs no connection, cold
 * HOSTS cache or not. Past the threshold of the address or the store, a checkout (a code attempt, a
 * back-in-stock sign-up) must carry a passed challenge (the `cf-turnstile-response` form field or header):
 * without one it is refused with 403 (JSON naming the widget's site key, or a page with the widget that
 * sends the shopper's form on once they are through). A request refused by its address or by the check
 * never counts against the store, so no script can fill a store's key and close its door for everyone.
 */
type StorefrontContext = Context<StorefrontEnv>;
type Limiter = DurableObjectNamespace<RateLimiter>;

/** Every shopper write, by method and by the path the shopper sends (before the store's internal path). */
const DOORS: { method: RegExp; path: RegExp; door: ShopperDoor }[] = [
  { method: /^POST$/, path: /^\/api\/cart\/lines$/, door: "cart" },
  { method: /^(POST|PATCH|DELETE)$/, path: /^\/api\/cart\/lines\/[^/]+$/, door: "cart" },
  { method: /^DELETE$/, path: /^\/api\/cart\/discount$/, door: "cart" },
  { method: /^POST$/, path: /^\/api\/cart\/discount$/, door: "discount" },
  { method: /^POST$/, path: /^\/(api\/)?checkout$/, door: "checkout" },
  { method: /^POST$/, path: /^\/api\/checkout\/[^/]+\/(pay|confirm)$/, door: "payment" },
  { method: /^POST$/, path: /^\/-gateway\/pay\/[^/]+$/, door: "payment" },
  { method: /^POST$/, path: /^\/products\/[^/]+\/notify$/, door: "notify" },
  { method: /^POST$/, path: /^\/(unsubscribe|consent)\/[^/]+$/, door: "emailLink" },
  { method: /^(GET|HEAD)$/, path: /^\/orders\/[^/]+\/(invoices|credit-notes)\/[^/]+\.pdf$/, door: "document" },
  { method: /^(GET|HEAD)$/, path: /^\/api\/search\/suggest$/, door: "suggest" },
  { method: /^POST$/, path: /^\/api\/mcp$/, door: "mcp" },
  { method: /^(GET|HEAD|POST|PUT)$/, path: /^\/api\/ucp\/checkout-sessions(\/[^/]+(\/cancel|\/complete)?)?$/, door: "ucp" },
  { method: /^(GET|HEAD)$/, path: /^\/\.well-known\/ucp$/, door: "ucpProfile" },
  { method: /^POST$/, path: /^\/api\/cart\/open\/[^/]+$/, door: "cart" },
  { method: /^POST$/, path: /^\/api\/cart\/session\/[^/]+$/, door: "cart" },
];

/** The doors with a check (those with a store key): what the person is asked to do, and the widget's action. */
const CHECKED: Partial<Record<ShopperDoor, { doing: string; action: ChallengeAction }>> = {
  checkout: { doing: "place this order", action: "checkout" },
  discount: { doing: "use a discount code", action: "discount" },
  notify: { doing: "sign up for this email", action: "notify" },
};

export function doorOf(method: string, path: string): ShopperDoor | null {
  return DOORS.find((d) => d.method.test(method) && d.path.test(path))?.door ?? null;
}

export const limiterOf = (env: { RATE_LIMITER: Limiter }) => env.RATE_LIMITER;
export const isForm = (c: Context) => /^(application\/x-www-form-urlencoded|multipart\/form-data)/i.test(c.req.header("content-type") ?? "");
/** A person's form gets a page; a script's JSON under /api/ gets JSON. */
const wantsPage = (c: Context) => !c.req.path.startsWith("/api/") || isForm(c);

/** Answers an error: thrown to the app's renderer (JSON under /api/, the error page elsewhere), or as the page for a form under /api/. */
function refuse(c: StorefrontContext, error: AppError): Response {
  if (!c.req.path.startsWith("/api/") || !isForm(c)) throw error;
  const page = errorPage({ status: error.status, code: error.code, message: error.message, data: error.data, requestId: c.var.requestId });
  return c.html(page, error.status as ContentfulStatusCode, error.headers);
}

function tooMany(c: StorefrontContext, outcome: DoorRefusal): Response {
  return refuse(c, new AppError("TOO_MANY_REQUESTS", refusalMessage(outcome), { reason: "rate_limited", retryAfterSeconds: outcome.retryAfterSeconds }, outcome.headers));
}

/** Code attempts counted as wrong before their lookup, by request: given back unless the lookup found no such code. */
const CODE_ATTEMPTS = new WeakMap<Request, Counted[]>();

export function shopperLimits(): MiddlewareHandler<StorefrontEnv> {
  return async function shopperLimits(c, next) {
    const door = doorOf(c.req.method, c.req.path);
    const hostname = door && normaliseHostname(c.req.header("host") ?? new URL(c.req.url).host);
    // No door, or a Host that names no store: the gate answers it.
    if (!door || !hostname) return next();
    // The challenge's configuration is read at every door that may ask for it, not only once one is due: a
    // deployment without it fails its first checkout (naming the variable), not the first one under attack.
    if (CHECKED[door]) c.var.providers.challenge();
    const client = clientOf(c.req.header("cf-connecting-ip"));
    const person = { door, passed: false };
    const through = await passDoor(c, shopperKeys(door, hostname, client), person);
    if (through instanceof Response) return through;
    if (door === "discount") {
      // Counted as a wrong code before the lookup, so racing guesses cannot all pass the count.
      const attempt = await passDoor(c, wrongCodeKeys(hostname, client), person);
      if (attempt instanceof Response) return attempt;
      CODE_ATTEMPTS.set(c.req.raw, attempt.counted);
    }
    for (const [name, value] of Object.entries(through.headers)) c.header(name, value);
    try {
      await next();
    } finally {
      // Given back unless the lookup found no such code (`codeWasWrong`): a right code, an expired one, a
      // malformed body or a closed store is no guess.
      const counted = CODE_ATTEMPTS.get(c.req.raw);
      CODE_ATTEMPTS.delete(c.req.raw);
      if (counted) await giveBackAll(limiterOf(c.env), counted);
    }
  };
}

/**
 * One door's keys (`passThrough`): the check, when due, is made at most once per request (`person.passed`;
 * a token is spent when checked). Answers the refusal, or what was counted.
 */
async function passDoor(c: StorefrontContext, keys: DoorKeys, person: { door: ShopperDoor; passed: boolean }): Promise<Response | Passed> {
  const outcome = await passThrough(limiterOf(c.env), keys, async () => {
    if (person.passed) return null;
    const words = CHECKED[person.door];
    if (!words) throw new Error(`The ${person.door} door has a threshold but no words for its check (CHECKED in limits.tsx).`);
    const refused = await challengeRefusal(c, words);
    person.passed = refused === null;
    return refused;
  });
  if (outcome.allowed) return outcome;
  return "checkRefused" in outcome ? outcome.checkRefused : tooMany(c, outcome);
}

/** After a code's lookup found no such code: the attempt stays counted as a wrong one (a guess, as far as we know). */
export function codeWasWrong(c: Context): void {
  CODE_ATTEMPTS.delete(c.req.raw);
}

/** The widget the checkout page shows ahead when the next checkout from this client would need it; else null. */
export async function checkoutWidget(shop: Pick<ShopRequest, "env" | "providers" | "hostname">, ip: string | undefined): Promise<Widget | null> {
  if (!(await challengeAhead(limiterOf(shop.env), shopperKeys("checkout", shop.hostname, clientOf(ip))))) return null;
  return shop.providers.challenge().widget;
}

/** The checkout form is ~2 KB; a copy is read only to carry a person's fields through the challenge page. */
const FORM_COPY_MAX = 64 * 1024;

/**
 * A form's text fields, read from a copy of the request (the route still reads the body itself). Only when
 * a challenge is due; a body said to be larger is not copied (the app's input guard bounds what is read).
 */
async function formCopy(c: StorefrontContext): Promise<Record<string, string>> {
  if (!isForm(c) || Number(c.req.header("content-length") ?? 0) > FORM_COPY_MAX) return {};
  const data = await c.req.raw
    .clone()
    .formData()
    .catch(() => null);
  const fields: Record<string, string> = {};
  for (const [name, value] of data ?? []) if (typeof value === "string" && !(name in fields)) fields[name] = value;
  return fields;
}

/** Checks the request's challenge token; null when it passed, else the 403 answer (503 when no check could be made). */
async function challengeRefusal(c: StorefrontContext, { doing, action }: { doing: string; action: ChallengeAction }): Promise<Response | null> {
  const challenge = c.var.providers.challenge();
  const fields = await formCopy(c);
  const check = await checkChallenge(challenge, c.req.header(CHALLENGE_FIELD) || fields[CHALLENGE_FIELD], c.req.header("cf-connecting-ip"), c.var.log);
  if (check !== "unavailable" && check.passed) return null;
  const message = challengeMessage(check, doing);
  if (check === "unavailable") throw new AppError("SERVICE_UNAVAILABLE", message, { reason: "challenge_unavailable" }, { "retry-after": String(CHALLENGE_RETRY_SECONDS) });
  const reason = check.reason === "missing" ? "challenge_required" : "challenge_failed";
  if (!wantsPage(c)) throw new AppError("FORBIDDEN", message, { reason, challenge: { ...challenge.widget, field: CHALLENGE_FIELD, header: CHALLENGE_FIELD, codes: check.codes } });
  c.header("cache-control", "no-store");
  return c.html(<ChallengePage widget={challenge.widget} path={c.req.path} action={action} fields={fields} message={message} />, 403);
}

/** The person check between a form and its route: the widget, and the form's own fields sent on with its token. */
const ChallengePage: FC<{ widget: Widget; path: string; action: ChallengeAction; fields: Record<string, string>; message: string }> = ({ widget, path, action, fields, message }) => (
  <Page title="One more step">
    <div class="card">
      <h1>One more step</h1>
      <p class="alert" role="alert">
        {message}
      </p>
      <form method="post" action={path}>
        {Object.entries(fields)
          .filter(([name]) => name !== CHALLENGE_FIELD)
          .map(([name, value]) => (
            <input type="hidden" name={name} value={value} />
          ))}
        <ChallengeWidget widget={widget} action={action} />
        <button type="submit">Continue</button>
      </form>
    </div>
  </Page>
);
