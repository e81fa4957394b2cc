import { and, desc, eq } from "drizzle-orm";
import { z } from "zod";
import { mailboxMessage, notification, NOTIFICATION_STATUSES } from "../db/schema";
import { storeProcedure } from "./define";
import { countColumn, offsetOf, pagePlan, pagingInput } from "./paging";
import * as out from "./outputs";

/** The notification log (issue 12): what was sent to shoppers, newest first. */
export const listNotifications = storeProcedure({
  router: "notifications",
  name: "list",
  description: "Messages sent to shoppers, newest first: {id, template, to, status (sending, sent, failed), eventId, createdAt}, with the last error of a failed one.",
  access: "orders.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, template: z.string(), to: z.string(), subject: z.string(), status: z.enum(NOTIFICATION_STATUSES), eventId: out.id, lastError: z.string().nullable(), createdAt: out.instant, sentAt: out.instant.nullable() })),
  customerDetails: true,
  input: z.strictObject({ ...pagingInput }),
  read(q, { store }, input) {
    const where = eq(notification.storeId, store);
    return pagePlan(
      q
        .select({
          id: notification.id,
          template: notification.template,
          to: notification.recipient,
          subject: notification.subject,
          status: notification.status,
          eventId: notification.eventId,
          lastError: notification.lastError,
          createdAt: notification.createdAt,
          sentAt: notification.sentAt,
        })
        .from(notification)
        .where(where)
        .orderBy(desc(notification.createdAt), desc(notification.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(notification).where(where),
      input,
    );
  },
});

/** The local mailer's mailbox (development and tests): the messages themselves, newest first. */
export const listMailbox = storeProcedure({
  router: "notifications",
  name: "mailbox",
  description: "The local mailbox (development only): the messages the local mailer kept instead of sending, newest first, with their text.",
  access: "orders.read",
  mutates: false,
  output: out.paged(z.object({ id: out.id, from: z.string(), to: z.string(), subject: z.string(), text: z.string(), html: z.string(), tag: z.string(), createdAt: out.instant })),
  customerDetails: true,
  input: z.strictObject({ ...pagingInput, tag: z.string().trim().max(60).optional(), id: z.uuid().optional().describe("One message (the mailbox page's HTML view)") }),
  read(q, { store }, input) {
    const where = and(eq(mailboxMessage.storeId, store), input.tag ? eq(mailboxMessage.tag, input.tag) : undefined, input.id ? eq(mailboxMessage.id, input.id) : undefined);
    return pagePlan(
      q
        .select({
          id: mailboxMessage.id,
          from: mailboxMessage.sender,
          to: mailboxMessage.recipient,
          subject: mailboxMessage.subject,
          text: mailboxMessage.textBody,
          html: mailboxMessage.htmlBody,
          tag: mailboxMessage.tag,
          createdAt: mailboxMessage.createdAt,
        })
        .from(mailboxMessage)
        .where(where)
        .orderBy(desc(mailboxMessage.createdAt), desc(mailboxMessage.id))
        .limit(input.pageSize)
        .offset(offsetOf(input)),
      q.select(countColumn()).from(mailboxMessage).where(where),
      input,
    );
  },
});

export const notificationProcedures = [listNotifications, listMailbox];
