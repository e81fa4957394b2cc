-- The order link in notification emails (docs/events.md): `/orders/<id>?k=<key>` with a key derived from the
-- worker's EMAIL_LINK_SECRET and the order id (shared/mail/links.ts). Only its SHA-256 is kept, set by the
-- notifications consumer when it first sends a message about the order; the buyer's own key (derived from
-- the cart token, access_key_hash, decision 0009) keeps working beside it.
alter table shop_order add column email_key_hash text check (email_key_hash ~ '^[0-9a-f]{64}$');
