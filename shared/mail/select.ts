import { z } from "zod";
import type { Database } from "../db/database";
import { localMailer } from "./local";
import type { Mailer } from "./mailer";
import { resendMailer } from "./resend";

const envSchema = z.discriminatedUnion("MAILER", [
  z.object({ MAILER: z.literal("local"), MAIL_FROM_DOMAIN: z.string().default("mail.localhost") }),
  z.object({
    MAILER: z.literal("resend"),
    RESEND_API_KEY: z.string().regex(/^re_[A-Za-z0-9_]{8,}$/, "must be a Resend API key (re_…)"),
    MAIL_FROM_DOMAIN: z.string().regex(/^[a-z0-9.-]+\.[a-z]{2,}$/, "must be the domain verified at Resend, e.g. mail.example.com"),
  }),
]);

export interface MailConfig {
  mailer: Mailer;
  /** The domain messages are sent from: `<Store name> <orders@<domain>>`. */
  fromDomain: string;
}

/** The deployment's mailer as its variables name it. */
export type MailSettings = { provider: "local"; fromDomain: string } | { provider: "resend"; apiKey: string; fromDomain: string };

/** The deployment's mailer: local (development and tests only) or Resend; throws naming the variable. */
export function mailSettingsFromEnv(env: Readonly<Record<string, unknown>>): MailSettings {
  const parsed = envSchema.safeParse({ MAILER: "local", ...env });
  if (!parsed.success) throw new Error(`Mailer configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const e = parsed.data;
  if (e.MAILER === "local") {
    if (env.APP_ENV !== "development" && env.APP_ENV !== "test") throw new Error("Mailer configuration: MAILER: the local mailbox is for development and tests only");
    return { provider: "local", fromDomain: e.MAIL_FROM_DOMAIN };
  }
  return { provider: "resend", apiKey: e.RESEND_API_KEY, fromDomain: e.MAIL_FROM_DOMAIN };
}

/** The mailer of `settings`; the local one keeps its mailbox in `db`. */
export function mailerFor(settings: MailSettings, db: Database): MailConfig {
  if (settings.provider === "local") return { mailer: localMailer(db), fromDomain: settings.fromDomain };
  return { mailer: resendMailer({ apiKey: settings.apiKey }), fromDomain: settings.fromDomain };
}
