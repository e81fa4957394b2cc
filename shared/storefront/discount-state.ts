import { sql } from "drizzle-orm";

export const DISCOUNT_STATES = ["disabled", "scheduled", "expired", "used_up", "live"] as const;
export type DiscountState = (typeof DISCOUNT_STATES)[number];

/**
 * A discount's state at read time, over the bare columns of one `discount` row (first match wins).
 * analytics.summary counts `live` with the same expression, so the two never disagree.
 */
export const DISCOUNT_STATE = sql.raw(
  `(case when status = 'disabled' then 'disabled'
     when starts_at > now() then 'scheduled'
     when ends_at is not null and ends_at <= now() then 'expired'
     when usage_limit is not null and usage_count >= usage_limit then 'used_up'
     else 'live' end)`,
);
