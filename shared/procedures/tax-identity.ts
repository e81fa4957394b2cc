import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import { AppError } from "../core/errors";
import { emitStep, ensure } from "../db/changes";
import { plan } from "../db/plan";
import { location } from "../db/schema";
import { indianStateSchema } from "../rules/gst";
import { gstinSchema, gstStateCodeOf, stateOfGstin } from "../rules/gstin";
import { storeProcedure } from "./define";
import { locationColumns, locationNotFound, locationOutput } from "./inventory";

/**
 * A location's tax identity (docs/gst.md "Tax identity"): its GSTIN, the legal name and address on its
 * invoices, and the state it ships from, which follows from the GSTIN. A settings change (owner, admin):
 * the registration a store invoices under is not day-to-day stock work (locations.update).
 */

const line = (max: number) => z.string().trim().min(1, "is required (or null to clear it)").max(max).nullable().optional();

export const taxIdentityInput = z
  .strictObject({
    id: z.uuid(),
    gstin: gstinSchema.nullable().optional().describe("The location's GSTIN (15 characters); its state becomes the location's state. null clears it."),
    legalName: line(200).describe("The registered legal name printed on the location's invoices"),
    addressLine1: line(200),
    addressLine2: line(200),
    city: line(120),
    postalCode: z.string().trim().regex(/^[1-9][0-9]{5}$/, "must be a 6-digit PIN code").nullable().optional(),
    state: indianStateSchema
      .nullable()
      .optional()
      .describe("ISO 3166-2:IN code of where the location ships from (its GST origin); with a GSTIN it must be the GSTIN's state, and may be left out"),
  })
  .superRefine((input, ctx) => {
    if (!input.gstin || input.state === undefined) return;
    const ofGstin = stateOfGstin(input.gstin);
    if (ofGstin !== input.state) {
      ctx.addIssue({
        code: "custom",
        path: ["gstin"],
        message: `GSTIN is registered in state code ${input.gstin.slice(0, 2)} (${ofGstin ?? "Other Territory"}), not ${input.state ?? "no state"}: a location's state is its GSTIN's`,
      });
    }
  });

const stateConflict = () =>
  new AppError("BAD_REQUEST", "This location has a GSTIN of another state: change the GSTIN (the state follows from it) or clear it first.", {
    issues: [{ path: "state", message: "must be the state of the location's GSTIN" }],
  });

export const updateTaxIdentity = storeProcedure({
  router: "locations",
  name: "updateTaxIdentity",
  description:
    "Set a location's tax identity: its GSTIN (validated: format, state code, check character), legal name and address. A GSTIN sets the location's state (its GST origin); a different explicit state is refused. Fields left out stay as they are; null clears one.",
  access: "settings.write",
  mutates: true,
  output: locationOutput,
  input: taxIdentityInput,
  write: {
    apply(q, { store }, input) {
      const { id, ...given } = input;
      const changes = { ...given, ...(given.gstin ? { state: stateOfGstin(given.gstin) } : {}) };
      const where = and(eq(location.storeId, store), eq(location.id, id));
      const found = ensure(q, sql`exists (select 1 from ${location} where ${where} for no key update)`, locationNotFound());
      if (Object.keys(changes).length === 0) return plan([found, q.select(locationColumns).from(location).where(where)] as const, ([, [row]]) => row!);
      // A state alone must still be the GSTIN's (kept, or cleared in the same change).
      const stateCode = given.state ? gstStateCodeOf(given.state) : null;
      const stateFits =
        given.gstin === undefined && given.state !== undefined
          ? sql`not exists (select 1 from ${location} where ${where} and gstin is not null and substr(gstin, 1, 2) is distinct from ${stateCode})`
          : sql`true`;
      return plan(
        [
          found,
          ensure(q, stateFits, stateConflict()),
          q.update(location).set(changes).where(where).returning(locationColumns),
          emitStep(q, "location.updated", { locationId: id, fields: Object.keys(changes) }),
        ] as const,
        ([, , [row]]) => row!,
      );
    },
  },
});

export const taxIdentityProcedures = [updateTaxIdentity];
