import type { Database } from "../db/database";
import { plan } from "../db/plan";
import { sendStoreUnit } from "../db/unit";
import { MailError, type Mailer, type OutgoingEmail } from "./mailer";
import { keepMail } from "./statements";

/**
 * The local mailer (`MAILER=local`, development and tests): nothing leaves the machine; each message is
 * kept in the store's mailbox (`mailbox_message`), which the admin opens at /mailbox. Like a provider it
 * honours the idempotency key (the same key twice keeps one message and answers the same id) and fails
 * on demand: `failFor` names recipients it refuses (`rejected`) and `busy` makes every send `rate_limited`.
 */
export interface LocalMailBehaviour {
  failFor?: readonly string[];
  busy?: boolean;
}

export function localMailer(db: Database, behaviour: LocalMailBehaviour = {}): Mailer {
  return {
    provider: "local",
    async send(message: OutgoingEmail) {
      if (behaviour.busy) throw new MailError("rate_limited", "the local mailbox was told to be busy", 2);
      if (behaviour.failFor?.includes(message.to.toLowerCase())) throw new MailError("rejected", `the local mailbox refuses ${message.to}`);
      // One statement, one round trip: kept once per key, the same id answered for a repeat.
      const id = await sendStoreUnit(
        db,
        message.storeId,
        (q) =>
          plan(
            [
              keepMail(q, message),
            ] as const,
            ([[row]]) => row!.id,
          ),
        { readOnly: false },
      );
      return { providerId: `local_${id}` };
    },
  };
}
