/** The drizzle tables of stores, people, customers, API grants, carts and links (see ./schema.ts; the catalogue and stock are ./schema-catalogue.ts). */
import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, char, index, integer, jsonb, pgTable, primaryKey, smallint, text, unique, uniqueIndex, uuid } from "drizzle-orm/pg-core";
import { createdAt, ts, updatedAt } from "./columns";

export const store = pgTable("store", {
  id: uuid("id").primaryKey().defaultRandom(),
  slug: text("slug").notNull().unique(),
  name: text("name").notNull(),
  currency: char("currency", { length: 3 }).notNull(),
  storefrontPasswordHash: text("storefront_password_hash"),
  mcpReadCustomerDetails: boolean("mcp_read_customer_details").notNull().default(false),
  mcpAllowChanges: boolean("mcp_allow_changes").notNull().default(false),
  mcpChangesNeedApproval: boolean("mcp_changes_need_approval").notNull().default(true),
  /** What an order pays for shipping (inclusive of GST), and the subtotal from which it is free. */
  shippingFeeMinor: bigint("shipping_fee_minor", { mode: "number" }).notNull().default(0),
  freeShippingOverMinor: bigint("free_shipping_over_minor", { mode: "number" }),
  /** The share of backordered pre-order units paid at checkout (100: all of it, no balance). */
  preorderDepositPercent: integer("preorder_deposit_percent").notNull().default(100),
  /** Whether checkout offers bank transfer (off for a new store), and how long a transfer order holds its stock (migration 0032). */
  manualTransferEnabled: boolean("manual_transfer_enabled").notNull().default(false),
  transferHoldHours: integer("transfer_hold_hours").notNull().default(72),
  /** Model tokens the store's assistant may use in a day (migration 0049); 0 turns it off. */
  assistantDailyTokens: integer("assistant_daily_tokens").notNull().default(200000),
  /** Whether AI agents may buy here over UCP (migration 0052); off: the profile and endpoints answer 404. */
  agenticCheckout: boolean("agentic_checkout").notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

/** A tenant table's store_id: the store it belongs to, removed with it (beside the store, so every schema
 * file takes it from here and the column helpers need no table). */
export const storeRef = () =>
  uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" });

export const userAccount = pgTable("user_account", {
  id: uuid("id").primaryKey().defaultRandom(),
  email: text("email").notNull(),
  name: text("name"),
  passwordHash: text("password_hash").notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const ROLES = ["owner", "admin", "staff"] as const;
export type RoleName = (typeof ROLES)[number];

export const member = pgTable(
  "member",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    storeId: uuid("store_id")
      .notNull()
      .references(() => store.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => userAccount.id, { onDelete: "cascade" }),
    role: text("role", { enum: ROLES }).notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [unique().on(t.storeId, t.userId), index("member_user_idx").on(t.userId)],
);

export const session = pgTable("session", {
  idHash: text("id_hash").primaryKey(),
  userId: uuid("user_id")
    .notNull()
    .references(() => userAccount.id, { onDelete: "cascade" }),
  activeStoreId: uuid("active_store_id").references(() => store.id, { onDelete: "set null" }),
  createdAt: createdAt(),
  lastSeenAt: ts("last_seen_at").notNull().defaultNow(),
  expiresAt: ts("expires_at").notNull(),
  userAgent: text("user_agent"),
  ip: text("ip"),
});

export const DOMAIN_STATUSES = ["pending", "verified", "failed"] as const;
export type DomainStatus = (typeof DOMAIN_STATUSES)[number];
/** Why a domain's claim failed (migration 0035): no TXT record within 7 days, or another store verified it first. */
export const DOMAIN_FAILED_REASONS = ["lapsed", "taken"] as const;
export type DomainFailedReason = (typeof DOMAIN_FAILED_REASONS)[number];

export const storeDomain = pgTable("store_domain", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" }),
  /** Unique per store; across stores only among verified domains (migration 0035: claims). */
  hostname: text("hostname").notNull(),
  status: text("status", { enum: DOMAIN_STATUSES }).notNull().default("pending"),
  /** Set exactly when `status` is failed. */
  failedReason: text("failed_reason", { enum: DOMAIN_FAILED_REASONS }),
  isPrimary: boolean("is_primary").notNull().default(false),
  verifiedAt: ts("verified_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
  /** The TXT record's token (migration 0016; shared/domains/dns.ts verificationRecord). */
  verificationToken: text("verification_token").notNull().default(sql`replace(gen_random_uuid()::text, '-', '')`),
  /** The custom hostname at the router (shared/domains/router.ts): its id and what the router last said. */
  routerId: text("router_id"),
  routerStatus: text("router_status"),
  routerSslStatus: text("router_ssl_status"),
  routedAt: ts("routed_at"),
});

/** The storefront's catalogue version per store (migration 0008): bumped by triggers, read by the edge cache. */
export const storefrontVersion = pgTable("storefront_version", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .unique()
    .references(() => store.id, { onDelete: "cascade" }),
  version: bigint("version", { mode: "number" }).notNull().default(1),
  changedAt: ts("changed_at").notNull().defaultNow(),
});

export const outboxEvent = pgTable("outbox_event", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: uuid("store_id")
    .notNull()
    .references(() => store.id, { onDelete: "cascade" }),
  kind: text("kind").notNull(),
  payload: jsonb("payload").$type<Record<string, unknown>>().notNull().default(sql`'{}'::jsonb`),
  createdAt: createdAt(),
  availableAt: ts("available_at").notNull().defaultNow(),
  processedAt: ts("processed_at"),
  attempts: integer("attempts").notNull().default(0),
  lastError: text("last_error"),
  deadAt: ts("dead_at"),
  seq: bigserial("seq", { mode: "number" }).notNull(),
  /** The payload's orderId, kept by a trigger (migration 0026) so an order's timeline reads an index. */
  orderId: uuid("order_id"),
});

// Admin and catalog (migrations/0002_admin_catalog.sql) ------------------------------------------------

export const staffInvitation = pgTable("staff_invitation", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  email: text("email").notNull(),
  role: text("role", { enum: ROLES }).notNull(),
  tokenHash: text("token_hash").notNull().unique(),
  invitedBy: uuid("invited_by"),
  createdAt: createdAt(),
  expiresAt: ts("expires_at").notNull(),
  acceptedAt: ts("accepted_at"),
  revokedAt: ts("revoked_at"),
});

/** Where a consent change came from (customer.marketing_consent_source, marketing_consent_record.source). */
export const CONSENT_SOURCES = ["staff", "checkout", "unsubscribe_link", "confirmation_link", "import"] as const;
export const CONSENT_STATES = ["none", "pending", "confirmed", "withdrawn"] as const;

export const customer = pgTable("customer", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  email: text("email"),
  firstName: text("first_name"),
  lastName: text("last_name"),
  phone: text("phone"),
  city: text("city"),
  acceptsMarketing: boolean("accepts_marketing").notNull().default(false),
  /** When and how consent last changed (migrations/0021_marketing.sql). */
  marketingConsentUpdatedAt: ts("marketing_consent_updated_at"),
  marketingConsentSource: text("marketing_consent_source", { enum: CONSENT_SOURCES }),
  /** pending, confirmed, withdrawn or none: kept by a trigger from the columns around it (migrations/0033_double_opt_in.sql). */
  marketingConsent: text("marketing_consent", { enum: CONSENT_STATES }).notNull().default("none"),
  /** An open request from checkout, confirmed through the emailed link; and that link's key hash. */
  marketingConsentRequestedAt: ts("marketing_consent_requested_at"),
  marketingConsentKeyHash: text("marketing_consent_key_hash"),
  note: text("note"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
  /** lower(email) and lower(first_name || ' ' || last_name), kept by a trigger (migration 0026): searchable under RLS. */
  emailLower: text("email_lower"),
  nameLower: text("name_lower"),
});

export const DISCOUNT_KINDS = ["percentage", "fixed_amount"] as const;
export const DISCOUNT_STATUSES = ["active", "disabled"] as const;

export const discount = pgTable("discount", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  code: text("code").notNull(),
  kind: text("kind", { enum: DISCOUNT_KINDS }).notNull(),
  value: bigint("value", { mode: "number" }).notNull(),
  startsAt: ts("starts_at").notNull().defaultNow(),
  endsAt: ts("ends_at"),
  usageLimit: integer("usage_limit"),
  usageCount: integer("usage_count").notNull().default(0),
  status: text("status", { enum: DISCOUNT_STATUSES }).notNull().default("active"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const PAGE_STATUSES = ["draft", "published"] as const;

export const page = pgTable("page", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  title: text("title").notNull(),
  handle: text("handle").notNull(),
  body: text("body").notNull().default(""),
  status: text("status", { enum: PAGE_STATUSES }).notNull().default("draft"),
  publishedAt: ts("published_at"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

// API grants and activity (migrations/0003_api_grants.sql) ----------------------------------------------

export const GRANT_KINDS = ["oauth", "token"] as const;
export type GrantKind = (typeof GRANT_KINDS)[number];

export const apiGrant = pgTable("api_grant", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  kind: text("kind", { enum: GRANT_KINDS }).notNull(),
  memberId: uuid("member_id").notNull(),
  name: text("name").notNull(),
  areas: text("areas").array().notNull(),
  createdAt: createdAt(),
  expiresAt: ts("expires_at"),
  revokedAt: ts("revoked_at"),
  lastUsedAt: ts("last_used_at"),
  secretHash: text("secret_hash").unique(),
  secretHint: text("secret_hint"),
  clientId: text("client_id"),
  clientName: text("client_name"),
});

export const apiActivity = pgTable("api_activity", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  grantId: uuid("grant_id").notNull(),
  procedure: text("procedure").notNull(),
  kind: text("kind", { enum: ["read", "write"] }).notNull(),
  via: text("via", { enum: ["token", "mcp"] }).notNull(),
  bucketStart: ts("bucket_start").notNull(),
  count: integer("count").notNull().default(1),
  lastAt: ts("last_at").notNull().defaultNow(),
});

// Idempotency keys (migrations/0051_idempotency_keys.sql; shared/pipeline/idempotency.ts) ------------------

/** A write's Idempotency-Key, taken by the change's own unit; its first answer stored once committed. */
export const idempotencyKey = pgTable(
  "idempotency_key",
  {
    storeId: storeRef(),
    /** `grant:<uuid>` (a token or an OAuth connection) or `member:<uuid>` (a signed-in person). */
    owner: text("owner").notNull(),
    key: text("key").notNull(),
    procedure: text("procedure").notNull(),
    requestHash: text("request_hash").notNull(),
    status: smallint("status"),
    response: text("response"),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.storeId, t.owner, t.key] }), index("idempotency_key_created_idx").on(t.storeId, t.createdAt), index("idempotency_key_age_idx").on(t.createdAt, t.storeId)],
);

// AI approvals (migrations/0004_ai_approvals.sql) ---------------------------------------------------------

export const APPROVAL_STATUSES = ["pending", "approved", "rejected", "failed"] as const;

export const aiApproval = pgTable("ai_approval", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  /** Null once the grant is gone with its member (migration 0035); such a proposal is expired. */
  grantId: uuid("grant_id"),
  memberId: uuid("member_id").notNull(),
  source: text("source", { enum: ["mcp", "api", "assistant"] }).notNull().default("mcp"),
  tool: text("tool"),
  procedure: text("procedure").notNull(),
  input: jsonb("input").$type<Record<string, unknown>>().notNull(),
  summary: text("summary").notNull(),
  /** As stored in its day (older rows are plain `{field, from, to}`): read it with readChanges (shared/assistant/changes.ts). */
  diff: jsonb("diff").$type<unknown[]>().notNull().default(sql`'[]'::jsonb`),
  status: text("status", { enum: APPROVAL_STATUSES }).notNull().default("pending"),
  createdAt: createdAt(),
  expiresAt: ts("expires_at").notNull(),
  decidedAt: ts("decided_at"),
  decidedBy: uuid("decided_by"),
  result: jsonb("result").$type<unknown>(),
  error: text("error"),
});

// Storefront carts (migrations/0006_carts.sql) ------------------------------------------------------------

export const cart = pgTable("cart", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  /** SHA-256 (hex) of the random token in the shopper's wc_cart cookie; the token itself is never stored. */
  tokenHash: text("token_hash").notNull(),
  currency: char("currency", { length: 3 }).notNull(),
  discountId: uuid("discount_id"),
  /** The order placed from this cart (migration 0009): a converted cart is no longer the shopper's cart. */
  convertedOrderId: uuid("converted_order_id"),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const CART_LINE_QUANTITY_MAX = 999;

export const cartLine = pgTable("cart_line", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  cartId: uuid("cart_id").notNull(),
  variantId: uuid("variant_id").notNull(),
  quantity: integer("quantity").notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

// Short links and page views (migrations/0007_short_links.sql) ------------------------------------------

export const shortLink = pgTable("short_link", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  slug: text("slug").notNull(),
  target: text("target").notNull(),
  utmSource: text("utm_source").notNull(),
  utmMedium: text("utm_medium").notNull(),
  utmCampaign: text("utm_campaign").notNull(),
  utmTerm: text("utm_term"),
  utmContent: text("utm_content"),
  clicks: bigint("clicks", { mode: "number" }).notNull().default(0),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
});

export const pageView = pgTable("page_view", {
  id: uuid("id").primaryKey().defaultRandom(),
  storeId: storeRef(),
  path: text("path").notNull(),
  linkId: uuid("link_id"),
  viewedAt: ts("viewed_at").notNull().defaultNow(),
});

// UCP signing keys (migrations/0052_ucp_signing_keys.sql; shared/ucp/store-keys.ts) -----------------------

/** One of the store's ES256 keys: its public JWK (published) and its private JWK, sealed. */
export const ucpSigningKey = pgTable(
  "ucp_signing_key",
  {
    storeId: storeRef(),
    kid: text("kid").notNull(),
    publicJwk: jsonb("public_jwk").$type<Record<string, unknown>>().notNull(),
    privateSealed: text("private_sealed").notNull(),
    createdAt: createdAt(),
    retiresAt: ts("retires_at"),
  },
  (t) => [
    primaryKey({ columns: [t.storeId, t.kid] }),
    uniqueIndex("ucp_signing_key_current_idx").on(t.storeId).where(sql`retires_at is null`),
    index("ucp_signing_key_store_idx").on(t.storeId, t.createdAt.desc()),
  ],
);
