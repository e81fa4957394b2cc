import { AppError, ERROR_STATUS, type ErrorCode } from "../core/errors";

/** The Postgres error under a driver or drizzle error (drizzle wraps query errors in `cause`). */
export function pgErrorOf(e: unknown): { code: string; constraint?: string; detail?: string; message?: string } | undefined {
  for (let cur = e, depth = 0; cur && depth < 4; depth++) {
    const candidate = cur as { code?: unknown; constraint?: unknown; detail?: unknown; message?: unknown; cause?: unknown };
    if (typeof candidate.code === "string" && /^[0-9A-Z]{5}$/.test(candidate.code)) {
      return {
        code: candidate.code,
        ...(typeof candidate.constraint === "string" ? { constraint: candidate.constraint } : {}),
        ...(typeof candidate.detail === "string" ? { detail: candidate.detail } : {}),
        ...(typeof candidate.message === "string" ? { message: candidate.message } : {}),
      };
    }
    cur = candidate.cause;
  }
  return undefined;
}

/** Unique constraints a client can run into, with the field and a message that says what to do. */
const UNIQUE: Record<string, { field: string; message: string }> = {
  product_store_id_handle_key: { field: "handle", message: "Another product already uses this handle; choose a different one." },
  product_variant_sku_key: { field: "sku", message: "Another variant already uses this SKU; SKUs are unique within a store." },
  location_store_id_name_key: { field: "name", message: "A location with this name already exists." },
  location_store_id_gstin_key: { field: "gstin", message: "Another location of this store already has this GSTIN; a GSTIN names one location." },
  customer_email_key: { field: "email", message: "A customer with this email already exists." },
  discount_code_key: { field: "code", message: "A discount with this code already exists." },
  page_store_id_handle_key: { field: "handle", message: "Another page already uses this handle; choose a different one." },
  collection_store_id_handle_key: { field: "handle", message: "Another collection already uses this handle; choose a different one." },
  // Two changes of the same list at once: the second finds the first's rows (migration 0042).
  collection_product_store_id_collection_id_position_key: { field: "productIds", message: "The collection's products were changed at the same moment; load them again and retry." },
  collection_product_pkey: { field: "productIds", message: "The collection's products were changed at the same moment; load them again and retry." },
  menu_item_store_id_position_key: { field: "items", message: "The menu was changed at the same moment; load it again and retry." },
  staff_invitation_open_email: { field: "email", message: "This person already has an open invitation." },
  store_domain_store_id_hostname_key: { field: "hostname", message: "This hostname is already one of this store's domains." },
  store_domain_verified_hostname: { field: "hostname", message: "This hostname is verified by another store." },
  short_link_store_id_slug_key: { field: "slug", message: "Another short link already uses this slug; choose a different one." },
  store_app_store_id_name_key: { field: "name", message: "Another app already uses this name; choose a different one." },
  member_store_id_user_id_key: { field: "email", message: "This person is already a member of the store." },
};

/**
 * Turns constraint violations a client can cause into 4xx answers, so a client mistake that slipped
 * past validation (a duplicate, a value out of range) is never a 500. Anything else is left alone.
 */
export function clientErrorFromConstraint(e: unknown): AppError | undefined {
  const pg = pgErrorOf(e);
  if (!pg) return undefined;
  if (pg.code === "23505") {
    const known = pg.constraint ? UNIQUE[pg.constraint] : undefined;
    const field = known?.field ?? "";
    return new AppError("CONFLICT", known?.message ?? "A record with these values already exists.", {
      issues: [{ path: field, message: known?.message ?? "already exists" }],
    });
  }
  // 22021/22P05: a text value Postgres cannot store, such as a NUL character in a search or a title.
  if (["23514", "23502", "22001", "22003", "22P02", "22021", "22P05"].includes(pg.code)) {
    return new AppError("BAD_REQUEST", "A value is out of the allowed range or format.", {
      issues: [{ path: "", message: pg.constraint ? `violates ${pg.constraint}` : "invalid value" }],
    });
  }
  if (pg.code === "23503") {
    return new AppError("NOT_FOUND", "A referenced record does not exist in this store.");
  }
  return undefined;
}

const CODE_OF_STATUS = new Map<number, ErrorCode>(Object.entries(ERROR_STATUS).map(([code, status]) => [status, code as ErrorCode]));

/**
 * A refusal a unit's statement raised (unit.ensure / unit.fail, migrations 0024-0025): SQLSTATE CE and
 * the HTTP status of the error code, the message, and JSON data in DETAIL. The same AppError the
 * step-by-step code threw for the same case.
 */
export function unitFailure(e: unknown): AppError | undefined {
  const pg = pgErrorOf(e);
  if (!pg?.code.startsWith("CE")) return undefined;
  const code = CODE_OF_STATUS.get(Number(pg.code.slice(2)));
  if (!code) return undefined;
  let data: Record<string, unknown> | undefined;
  try {
    const parsed: unknown = JSON.parse(pg.detail ?? "{}");
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) && Object.keys(parsed).length > 0) data = parsed as Record<string, unknown>;
  } catch {
    data = undefined;
  }
  return new AppError(code, pg.message ?? "Refused.", data);
}
