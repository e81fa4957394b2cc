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

/** The deployment's mailer: local (development and tests only) or Resend; throws naming the variable. */
export function mailerFromEnv(env: object, db: Database): MailConfig {
  const vars = env as Record<string, unknown>;
  const parsed = envSchema.safeParse({ MAILER: "local", ...vars });
  if (!parsed.success) throw new Error(`Mailer configuration: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  const e = parsed.data;
  if (e.MAILER === "local") {
    if (vars.APP_ENV !== "development" && vars.APP_ENV !== "test") throw new Error("Mailer configuration: MAILER: the local mailbox is for development and tests only");
    return { mailer: localMailer(db), fromDomain: e.MAIL_FROM_DOMAIN };
  }
  return { mailer: resendMailer({ apiKey: e.RESEND_API_KEY }), fromDomain: e.MAIL_FROM_DOMAIN };
}
