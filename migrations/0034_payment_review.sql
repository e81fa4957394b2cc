-- Payments that do not add up (issue 20 item 5; docs/decisions/0022-payment-review.md). A report of money
-- held or taken (authorized, captured) for less than the attempt's amount, or in another currency than
-- the order's, does not move the attempt: the status-apply routine keeps the first such report here and
-- the merchant gets a `payment_review` task. The attempt's status is untouched (the SPEC's states and
-- "never moves backwards" hold); a later report that adds up still moves it.
--
--   review_reason   amount_below | currency_differs
--   review_report   what was reported: {status, amount, currency, paymentId, trigger}
--   review_at       when (the transaction that marked it)

alter table payment_attempt
  add column review_reason text check (review_reason in ('amount_below', 'currency_differs')),
  add column review_report jsonb check (jsonb_typeof(review_report) = 'object'),
  add column review_at timestamptz,
  add constraint payment_attempt_review_check
    check ((review_reason is null) = (review_report is null) and (review_reason is null) = (review_at is null));

-- The merchant's task for it, one per attempt (subject_id: the attempt).
alter table merchant_task drop constraint merchant_task_kind_check;
alter table merchant_task add constraint merchant_task_kind_check
  check (kind in ('rto', 'paid_late', 'refund_failed', 'balance_expired', 'payment_review'));
