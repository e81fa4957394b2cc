import { html } from "hono/html";
import type { FC } from "hono/jsx";
import { CHALLENGE_FIELD, type ChallengeWidget as Widget } from "./challenge";
import { DUMMY_TOKEN, TEST_SITE_KEYS } from "./local";
import { TURNSTILE_SCRIPT } from "./turnstile";

/**
 * The challenge inside a form. Turnstile: its script (from challenges.cloudflare.com, which the pages'
 * Content-Security-Policy allows for script-src and frame-src) and its container, which puts the token in
 * the form's `cf-turnstile-response` field once solved; no inline script. Local: what the test site key's
 * widget does, without the network: the dummy token (passes), nothing (blocks), or a box to tick (interactive).
 */
export type ChallengeAction = "checkout" | "login" | "discount" | "notify" | "password";

export const ChallengeWidget: FC<{ widget: Widget; action: ChallengeAction }> = ({ widget, action }) => {
  if (widget.provider === "turnstile") {
    return html`<script src="${TURNSTILE_SCRIPT}" async defer></script>
      <div class="cf-turnstile" data-sitekey="${widget.siteKey}" data-action="${action}"></div>`;
  }
  const behaviour = TEST_SITE_KEYS[widget.siteKey];
  if (behaviour === "passes") {
    return html`<p class="muted" data-challenge="local"><input type="hidden" name="${CHALLENGE_FIELD}" value="${DUMMY_TOKEN}" /> Local person check (Turnstile test key): passed.</p>`;
  }
  if (behaviour === "interactive") {
    return html`<label class="check" data-challenge="local"><input type="checkbox" name="${CHALLENGE_FIELD}" value="${DUMMY_TOKEN}" required /> I am a person (local check, Turnstile test key)</label>`;
  }
  return html`<p class="muted" data-challenge="local">Local person check (Turnstile test key): blocked.</p>`;
};
