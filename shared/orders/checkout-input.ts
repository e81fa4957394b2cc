import { z } from "zod";
import { indianStateSchema } from "../rules/gst";
import { gstinSchema } from "../rules/gstin";
import type { AttemptRead } from "./statements/order-view";
import type { OrderView } from "./order-view";

/** What checkout takes from the shopper (the API's JSON, the checkout page's form) and what it answers (./checkout.ts). */

const E164 = /^\+[1-9][0-9]{7,14}$/;
const text = (max: number) => z.string().trim().min(1, "is required").max(max);

export const checkoutInput = z.strictObject({
  email: z.email("must be an email address").max(254),
  phone: z.string().trim().regex(E164, "must be an E.164 phone number such as +919876543210").optional(),
  shippingAddress: z.strictObject({
    name: text(200),
    line1: text(200),
    line2: z.string().trim().max(200).optional(),
    city: text(100),
    state: indianStateSchema,
    postalCode: z.string().trim().regex(/^[1-9][0-9]{5}$/, "must be a 6-digit PIN code"),
    country: z.literal("IN", { error: "must be IN: this store ships within India" }),
  }),
  paymentMethod: z.enum(["gateway", "manual_transfer"]),
  acceptsMarketing: z.boolean().optional().describe("The shopper ticked 'Email me news and offers' (never pre-ticked)"),
  // A business purchase (docs/gst.md "Tax identity"): any state's GSTIN; the place of supply stays the delivery state.
  gstin: gstinSchema.optional().describe("A business purchase: the buyer's GSTIN (15 characters), printed on the tax invoice"),
  legalName: text(200).optional().describe("The business's legal name for the tax invoice (only with gstin)"),
}).refine((input) => input.legalName === undefined || input.gstin !== undefined, { path: ["gstin"], message: "is required with a legal name (a business purchase)" });
export type CheckoutInput = z.infer<typeof checkoutInput>;

/** A payment attempt as checkout and the payment steps answer it (read in checkout-reading.ts). */
export type AttemptRow = AttemptRead;

export interface Placed {
  order: OrderView;
  attempt: AttemptRow;
  replayed: boolean;
  /** The order's access key (`/orders/<id>?k=<key>`), the same on a replay; only its hash is stored. */
  accessKey: string;
}
