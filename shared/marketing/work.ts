import type { StoreTx } from "../db/with-store";

/**
 * The store-scoped steps of `{marketing}-tick` (./tick.ts), each inside the store's unit of work. The
 * `marketing_message` rows are the durable work list: a campaign's start writes one per consenting
 * recipient, a due enrolment one for its customer; the tick claims queued rows for five minutes and hands
 * their ids to `{marketing}-send`. A claim that lapses (a lost queue message, a crashed consumer) is taken
 * again by a later tick, so nothing is lost; the send itself is idempotent by the message id.
 */

/** Payment states in which money was received: the order counts as bought. */
export const MONEY_RECEIVED = "('partially_paid', 'paid', 'partially_refunded', 'refunded')";

/** Who a campaign's audience is, on top of consent (always required) and an email address. */
const AUDIENCE_SQL: Record<string, string> = {
  subscribers: "true",
  buyers: `exists (select 1 from shop_order o where o.store_id = c.store_id and o.email = lower(c.email) and o.payment_status in ${MONEY_RECEIVED})`,
  non_buyers: `not exists (select 1 from shop_order o where o.store_id = c.store_id and o.email = lower(c.email) and o.payment_status in ${MONEY_RECEIVED})`,
};

/** A claim lasts this long; a row still queued after it is claimed again. */
export const CLAIM_MS = 5 * 60_000;

/** Starts every campaign due at `now`: one queued message per consenting customer of its audience. */
export async function startDueCampaigns(tx: StoreTx, now: Date): Promise<{ campaigns: number; messages: number }> {
  const { rows } = await tx.$client.query<{ id: string; audience: string }>(
    `update campaign set status = 'sending', started_at = $2, updated_at = now()
     where store_id = $1 and status = 'scheduled' and starts_at <= $2 returning id, audience`,
    [tx.storeId, now],
  );
  let messages = 0;
  for (const c of rows) {
    const audience = AUDIENCE_SQL[c.audience];
    if (!audience) throw new Error(`campaign ${c.id}: unknown audience ${c.audience}`);
    const inserted = await tx.$client.query(
      `insert into marketing_message (store_id, customer_id, campaign_id, recipient)
       select c.store_id, c.id, $2, lower(c.email) from customer c
       where c.store_id = $1 and c.accepts_marketing and c.email is not null and ${audience}
       on conflict do nothing`,
      [tx.storeId, c.id],
    );
    messages += inserted.rowCount ?? 0;
    await tx.$client.query("update campaign set recipients = (select count(*) from marketing_message where store_id = $1 and campaign_id = $2) where store_id = $1 and id = $2", [tx.storeId, c.id]);
  }
  return { campaigns: rows.length, messages };
}

interface DueEnrolment {
  id: string;
  kind: string;
  enabled: boolean;
  converted: boolean;
  customer_id: string | null;
}

/**
 * Decides each enrolment due at `now` (oldest first, at most `limit`): a disabled automation, an abandoned
 * checkout that was paid (or followed by a paid order), or a customer without consent is skipped with the
 * reason; the rest get their message queued.
 */
export async function queueDueEnrolments(tx: StoreTx, now: Date, limit: number): Promise<{ queued: number; skipped: number }> {
  const { rows } = await tx.$client.query<DueEnrolment>(
    `select e.id, a.kind, a.enabled,
       (o.payment_status in ${MONEY_RECEIVED} or exists (
          select 1 from shop_order later where later.store_id = o.store_id and later.email = o.email and later.id <> o.id
            and later.placed_at >= o.placed_at and later.payment_status in ${MONEY_RECEIVED})) as converted,
       (select c.id from customer c where c.store_id = e.store_id and lower(c.email) = e.email and c.accepts_marketing) as customer_id
     from marketing_enrolment e
     join marketing_automation a on a.store_id = e.store_id and a.id = e.automation_id
     join shop_order o on o.store_id = e.store_id and o.id = e.order_id
     where e.store_id = $1 and e.status = 'waiting' and e.due_at <= $2
     order by e.due_at, e.id limit $3
     for update of e skip locked`,
    [tx.storeId, now, limit],
  );
  let queued = 0;
  for (const e of rows) {
    const reason = !e.enabled ? "disabled" : e.kind === "abandoned_checkout" && e.converted ? "converted" : !e.customer_id ? "no_consent" : null;
    if (reason === null) {
      await tx.$client.query(
        `insert into marketing_message (store_id, customer_id, enrolment_id, recipient)
         select $1, c.id, $2, lower(c.email) from customer c where c.store_id = $1 and c.id = $3
         on conflict do nothing`,
        [tx.storeId, e.id, e.customer_id],
      );
      queued++;
    }
    await tx.$client.query("update marketing_enrolment set status = $3, reason = $4, decided_at = $5 where store_id = $1 and id = $2", [
      tx.storeId,
      e.id,
      reason === null ? "queued" : "skipped",
      reason,
      now,
    ]);
  }
  return { queued, skipped: rows.length - queued };
}

/** Claims up to `limit` queued messages whose claim is free or lapsed; returns their ids, oldest first. */
export async function claimQueuedMessages(tx: StoreTx, now: Date, limit: number): Promise<string[]> {
  const { rows } = await tx.$client.query<{ id: string }>(
    `with next as (
       select id from marketing_message
       where store_id = $1 and status = 'queued' and (claimed_until is null or claimed_until <= $2)
       order by created_at, id limit $3 for update skip locked)
     update marketing_message m set claimed_until = $2::timestamptz + make_interval(secs => $4)
     from next where m.store_id = $1 and m.id = next.id returning m.id, m.created_at`,
    [tx.storeId, now, limit, CLAIM_MS / 1000],
  );
  return rows.map((r) => r.id);
}

/** Campaigns with nothing left queued are sent. */
export async function finishCampaigns(tx: StoreTx, now: Date): Promise<number> {
  const { rowCount } = await tx.$client.query(
    `update campaign c set status = 'sent', finished_at = $2, updated_at = now()
     where c.store_id = $1 and c.status = 'sending'
       and not exists (select 1 from marketing_message m where m.store_id = c.store_id and m.campaign_id = c.id and m.status = 'queued')`,
    [tx.storeId, now],
  );
  return rowCount ?? 0;
}
