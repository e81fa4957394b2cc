import { z } from "zod";

/**
 * What an agent sends to create or replace a UCP checkout session (issue 26 item 3; docs/ucp.md): the bare
 * checkout object of the specification's create and update views (`shopping/checkout.json` with the
 * fulfillment and discount extensions). Checked at the door for shape only: a wrong type, a string longer
 * than any real value or a list longer than any real checkout is a 400; a missing email or address, an
 * unknown product or a dead code is the session's business, answered 200 with its `messages`. Fields we do
 * not read (`context`, `signals`, `attribution`, `payment`, line item ids) are allowed and dropped.
 */
const text = (max: number) => z.string().max(max);

/** The postal address fields of a shipping destination (`common/types/postal_address.json`). */
export const ADDRESS_FIELDS = ["first_name", "last_name", "street_address", "extended_address", "address_locality", "address_region", "postal_code", "address_country", "phone_number"] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];
export type Address = Partial<Record<AddressField, string>>;

const destination = z.object({
  id: text(64).optional(),
  type: text(32).optional(),
  ...Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, text(200).optional()])),
}) as unknown as z.ZodType<Address & { id?: string; type?: string }>;

/** The most line items a session holds (the migration's check). */
export const SESSION_LINES_MAX = 100;

export const checkoutRequest = z.object({
  line_items: z
    .array(
      z.object({
        id: text(64).optional(),
        item: z.object({ id: text(200) }),
        quantity: z.number().int().min(1).max(1_000_000),
      }),
    )
    .max(SESSION_LINES_MAX),
  buyer: z
    .object({ email: text(254).optional(), first_name: text(200).optional(), last_name: text(200).optional(), phone_number: text(32).optional() })
    .optional(),
  fulfillment: z
    .object({
      methods: z
        .array(
          z.object({
            id: text(64).optional(),
            type: text(32).optional(),
            destinations: z.array(destination).max(10).optional(),
            selected_destination_id: text(64).nullable().optional(),
          }),
        )
        .max(5)
        .optional(),
    })
    .optional(),
  discounts: z.object({ codes: z.array(text(64)).max(10).optional() }).optional(),
});
export type CheckoutRequest = z.infer<typeof checkoutRequest>;

/** What a session keeps of a request (the row of migration 0053): the lines, the buyer, one address, the codes. */
export interface SessionAsked {
  lineItems: { variant_id: string; quantity: number }[];
  buyer: Record<string, string> | null;
  destination: Address | null;
  discountCodes: string[];
}

const present = <T extends Record<string, string | undefined>>(o: T | undefined): Record<string, string> | null => {
  if (!o) return null;
  const kept = Object.fromEntries(Object.entries(o).filter((e): e is [string, string] => typeof e[1] === "string"));
  return Object.keys(kept).length ? kept : null;
};

/**
 * A request as the session keeps it (a full replacement on update: whatever is left out is cleared). One
 * shipping address: the selected destination of the first shipping method, else its first (the store ships
 * an order to one place, `allows_multi_destination: false` in its profile).
 */
export function askedOf(request: CheckoutRequest): SessionAsked {
  const method = request.fulfillment?.methods?.find((m) => (m.type ?? "shipping") === "shipping");
  const destinations = method?.destinations ?? [];
  const chosen = destinations.find((d) => d.id !== undefined && d.id === method?.selected_destination_id) ?? destinations[0];
  const address = chosen ? present(Object.fromEntries(ADDRESS_FIELDS.map((f) => [f, chosen[f]]))) : null;
  return {
    lineItems: request.line_items.map((l) => ({ variant_id: l.item.id, quantity: l.quantity })),
    buyer: present(request.buyer),
    destination: address,
    discountCodes: request.discounts?.codes ?? [],
  };
}

/** A zod issue's path as the JSONPath the protocol's messages use: `$.line_items[0].quantity`, `$.meta["idempotency-key"]`. */
export const jsonPathOf = (path: readonly PropertyKey[]): string =>
  path.reduce<string>((at, p) => (typeof p === "number" ? `${at}[${p}]` : /^[A-Za-z_]\w*$/.test(String(p)) ? `${at}.${String(p)}` : `${at}[${JSON.stringify(String(p))}]`), "$");
