-- The Universal Commerce Protocol (issue 26; docs/ucp.md, docs/decisions/0042-ucp.md): whether agents may
-- buy from the store (off for every store until the merchant turns it on: the profile and the endpoints then
-- answer 404), and the store's ES256 signing keys. A key's public half is published in the store's profile
-- (`/.well-known/ucp`); its private half is kept only sealed (AES-GCM under a key derived from the deployment's
-- UCP_SIGNING_ROOT_SECRET for this store and key), never readable without that secret.
alter table store add column agentic_checkout boolean not null default false;

create table ucp_signing_key (
  store_id uuid not null references store (id) on delete cascade,
  -- The RFC 7638 thumbprint of the public key (base64url of a SHA-256).
  kid text not null check (kid ~ '^[A-Za-z0-9_-]{43}$'),
  public_jwk jsonb not null check (public_jwk ->> 'kty' = 'EC' and public_jwk ->> 'crv' = 'P-256' and not public_jwk ? 'd'),
  private_sealed text not null check (private_sealed ~ '^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$'),
  created_at timestamptz not null default now(),
  -- Set when a newer key replaces this one: it stays published (and accepted) until then, 7 days on, as the
  -- specification's rotation asks; null for the key the store signs with.
  retires_at timestamptz,
  primary key (store_id, kid)
);
-- At most one key signs at a time.
create unique index ucp_signing_key_current_idx on ucp_signing_key (store_id) where retires_at is null;
create index ucp_signing_key_store_idx on ucp_signing_key (store_id, created_at desc);
select internal.make_tenant_table('ucp_signing_key');
