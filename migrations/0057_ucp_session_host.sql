-- The store domain an agent's checkout session was made on (docs/ucp.md): the order updates to its platform
-- name the profile and the order's page on that domain, the one the agent discovered and bought on (a store
-- may answer on several). Sessions made before keep null and use the store's primary domain.
alter table ucp_checkout_session add column host text check (host is null or (host ~ '^[a-z0-9.:-]+$' and length(host) <= 260));
