import { z } from "zod";
import { unstorableIssue } from "#shared/core/storable";
import { redirectUriProblem } from "./server";

/**
 * RFC 7591 dynamic registration, judged here before the provider sees it (docs/decisions/
 * 0023-inputs-at-the-door.md). The provider keeps whatever a client registers in KV and shows its name on
 * the consent page, so the metadata is held to what an honest client sends: a few exact redirect URIs
 * under the SPEC's rule, a short printable name, bounded lists. Only the fields below are passed on;
 * anything else is ignored, as RFC 7591 §2 lets a server do with metadata it does not understand.
 */
export const REGISTRATION_BODY_LIMIT = 256 * 1024;
export const MAX_REDIRECT_URIS = 10;
const URI_MAX = 2000;

/** C0 and C1 controls, DEL: nothing a name or an address shows or needs. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

const printable = (max: number) =>
  z
    .string()
    .max(max, `is longer than ${max} characters`)
    .refine((s) => !CONTROL.test(s), "contains control characters");

const redirectUri = printable(URI_MAX).superRefine((uri, ctx) => {
  // The provider compares redirect URIs exactly: a pattern would only ever mislead.
  const problem = uri.includes("*")
    ? "must be exact: no wildcards (*)"
    : uri.includes("#")
      ? "must not carry a fragment (#)"
      : /\s/.test(uri)
        ? "must not contain spaces"
        : redirectUriProblem(uri);
  if (problem) ctx.addIssue({ code: "custom", message: `${problem}. Use https, http on localhost/127.0.0.1/[::1], or an app-specific scheme` });
});

const httpsUri = printable(URI_MAX).refine((uri) => URL.canParse(uri) && new URL(uri).protocol === "https:", "must be an https URL");
const word = printable(100).regex(/^[A-Za-z0-9_.:-]+$/, "must be a single registered value, such as authorization_code");

const metadata = z.object({
  redirect_uris: z
    .array(redirectUri, { error: "must be a list of redirect URIs" })
    .min(1, "must list at least one redirect URI")
    .max(MAX_REDIRECT_URIS, `lists at most ${MAX_REDIRECT_URIS} redirect URIs`)
    .refine((uris) => new Set(uris).size === uris.length, "lists the same URI twice"),
  client_name: printable(200)
    .refine((s) => s.trim().length > 0, "is empty")
    .optional(),
  client_uri: httpsUri.optional(),
  logo_uri: httpsUri.optional(),
  policy_uri: httpsUri.optional(),
  tos_uri: httpsUri.optional(),
  contacts: z.array(printable(320)).max(10, "lists at most 10 contacts").optional(),
  grant_types: z.array(word).max(5, "lists at most 5 grant types").optional(),
  response_types: z.array(word).max(5, "lists at most 5 response types").optional(),
  token_endpoint_auth_method: word.optional(),
  scope: printable(1000).optional(),
  software_id: printable(200).optional(),
  software_version: printable(200).optional(),
});

/** RFC 7591 §3.2.2: a redirect URI's own code, invalid_client_metadata for any other field. */
const errorFor = (field: string) => (field === "redirect_uris" ? "invalid_redirect_uri" : "invalid_client_metadata");

export type RegistrationVerdict = { body: string } | { error: "invalid_request" | "invalid_redirect_uri" | "invalid_client_metadata"; description: string };

/** The registration body to pass to the provider, or the RFC 7591 error that refuses it. */
export function judgeRegistration(text: string): RegistrationVerdict {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { error: "invalid_request", description: "The body is not valid JSON; send the client metadata as a JSON object." };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return { error: "invalid_client_metadata", description: "The client metadata must be a JSON object." };
  }
  const unstorable = unstorableIssue(parsed);
  if (unstorable) return { error: errorFor(unstorable.path.split(".")[0]!), description: `${unstorable.path || "The metadata"} ${unstorable.message}.` };
  const checked = metadata.safeParse(parsed);
  if (!checked.success) {
    const issue = checked.error.issues[0]!;
    const field = issue.path[0] === undefined ? "metadata" : String(issue.path[0]);
    const at = issue.path.length > 1 ? `${field}[${issue.path.slice(1).join(".")}]` : field;
    return { error: errorFor(field), description: `${at} ${issue.message.replace(/^Invalid input: /, "")}.` };
  }
  return { body: JSON.stringify(checked.data) };
}
