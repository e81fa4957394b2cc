import { mailboxMessage } from "../db/schema";
import { statement } from "../db/statement";
import { CURRENT_STORE, sql } from "../db/steps";

/** Mail's one statement in SQL (decision 0026): the local mailbox's keep (./local.ts). */

export interface KeptMail {
  idempotencyKey: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  tag: string;
}

/** Kept once per key; a repeat answers the id it was kept under. */
export const keepMail = statement("mail.keepMail", {
  row: { id: mailboxMessage.id },
  examples: [[{ idempotencyKey: "k", from: "a@example.test", to: "b@example.test", subject: "s", text: "t", html: "<p>t</p>", tag: "order" }]],
  sql: (m: KeptMail) =>
    sql`with put as (
      insert into mailbox_message (store_id, idempotency_key, sender, recipient, subject, text_body, html_body, tag)
      values (${CURRENT_STORE}, ${m.idempotencyKey}, ${m.from}, ${m.to}, ${m.subject}, ${m.text}, ${m.html}, ${m.tag})
      on conflict (store_id, idempotency_key) do nothing returning id)
    select id from put union all select id from mailbox_message where store_id = ${CURRENT_STORE} and idempotency_key = ${m.idempotencyKey} limit 1`,
});
