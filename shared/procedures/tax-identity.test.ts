import { describe, expect, it } from "vitest";
import { isAppError } from "#shared/core/errors";
import { testDb } from "../../test/harness";
import { outboxPayloads, storeWithCaller, type Caller } from "../../test/procedures";

const db = testDb();

interface Location {
  id: string;
  name: string;
  city: string | null;
  state: string | null;
  gstin: string | null;
  legalName: string | null;
  addressLine1: string | null;
  addressLine2: string | null;
  postalCode: string | null;
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => ({ code: "ok", path: undefined, message: "" }),
    (e: unknown) => {
      if (!isAppError(e)) throw e;
      const issues = e.data?.issues as { path: string; message: string }[] | undefined;
      return { code: e.code, path: issues?.[0]?.path, message: issues?.[0]?.message ?? e.message };
    },
  );

const newLocation = (call: Caller, name: string) => call("locations.create", { name }) as Promise<Location>;

describe("locations.updateTaxIdentity", () => {
  it("sets the GSTIN (normalised), legal name and address; the state follows from the GSTIN; the list shows them", async () => {
    const { store, call } = await storeWithCaller(db, "owner");
    const mumbai = await newLocation(call, "Mumbai warehouse");
    const updated = (await call("locations.updateTaxIdentity", {
      id: mumbai.id,
      gstin: " 27abcde1234f1z0 ",
      legalName: "Demo Retail Private Limited",
      addressLine1: "Unit 4, Sagar Industrial Estate",
      city: "Mumbai",
      postalCode: "400070",
    })) as Location;
    expect(updated).toMatchObject({ gstin: "27ABCDE1234F1Z0", state: "IN-MH", legalName: "Demo Retail Private Limited", postalCode: "400070", addressLine2: null });
    const listed = (await call("locations.list")) as { items: Location[] };
    expect(listed.items.find((l) => l.id === mumbai.id)).toMatchObject({ gstin: "27ABCDE1234F1Z0", state: "IN-MH", addressLine1: "Unit 4, Sagar Industrial Estate" });
    expect((await outboxPayloads(db, store.id, "location.updated")).at(-1)).toMatchObject({ locationId: mumbai.id });

    // A new GSTIN of another state moves the location's state; the same state given explicitly is fine.
    const moved = (await call("locations.updateTaxIdentity", { id: mumbai.id, gstin: "29ABCDE1234F1ZW", state: "IN-KA" })) as Location;
    expect(moved).toMatchObject({ gstin: "29ABCDE1234F1ZW", state: "IN-KA", legalName: "Demo Retail Private Limited" });
    // Other Territory (97) has no ISO state: the location then has none.
    expect(await call("locations.updateTaxIdentity", { id: mumbai.id, gstin: "97ABCDE1234F1ZT" })).toMatchObject({ state: null });
    // Clearing the GSTIN keeps the state; a state alone may then be set.
    expect(await call("locations.updateTaxIdentity", { id: mumbai.id, gstin: null, state: "IN-GJ" })).toMatchObject({ gstin: null, state: "IN-GJ" });
  });

  it("refuses a bad GSTIN with the reason, a GSTIN of another state than the one given, and a state against the kept GSTIN", async () => {
    const { call } = await storeWithCaller(db, "owner");
    const loc = await newLocation(call, "Bengaluru warehouse");
    const update = (input: Record<string, unknown>) => failure(call("locations.updateTaxIdentity", { id: loc.id, ...input }));
    expect(await update({ gstin: "27AAPFU0939F1ZO" })).toMatchObject({ code: "BAD_REQUEST", path: "gstin", message: expect.stringMatching(/check character/) });
    expect(await update({ gstin: "25ABCDE1234F1Z4" })).toMatchObject({ code: "BAD_REQUEST", path: "gstin", message: expect.stringMatching(/state code 25/) });
    expect(await update({ gstin: "27AAPFU0939F1YV" })).toMatchObject({ code: "BAD_REQUEST", path: "gstin", message: expect.stringMatching(/regular taxpayer/) });
    expect(await update({ gstin: "29ABCDE1234F1ZW", state: "IN-MH" })).toMatchObject({ code: "BAD_REQUEST", path: "gstin", message: expect.stringMatching(/state code 29/) });
    expect(await update({ postalCode: "012345" })).toMatchObject({ code: "BAD_REQUEST", path: "postalCode" });
    expect(await update({ legalName: "  " })).toMatchObject({ code: "BAD_REQUEST", path: "legalName" });

    await call("locations.updateTaxIdentity", { id: loc.id, gstin: "29ABCDE1234F1ZW" });
    expect(await update({ state: "IN-MH" })).toMatchObject({ code: "BAD_REQUEST", path: "state" });
    expect(await update({ state: "IN-KA", city: "Bengaluru" })).toMatchObject({ code: "ok" });

    // A GSTIN names one location of the store.
    const other = await newLocation(call, "Mysuru counter");
    expect(await failure(call("locations.updateTaxIdentity", { id: other.id, gstin: "29ABCDE1234F1ZW" }))).toMatchObject({ code: "CONFLICT", path: "gstin" });
    expect(await failure(call("locations.updateTaxIdentity", { id: crypto.randomUUID(), legalName: "X" }))).toMatchObject({ code: "NOT_FOUND" });
  });

  it("is a settings change: staff may rename a location but not set its tax identity", async () => {
    const { call } = await storeWithCaller(db, "staff");
    const loc = await newLocation(call, "Pune counter");
    expect(await failure(call("locations.updateTaxIdentity", { id: loc.id, legalName: "X" }))).toMatchObject({ code: "FORBIDDEN" });
    expect(await call("locations.update", { id: loc.id, name: "Pune shop" })).toMatchObject({ name: "Pune shop", gstin: null });
  });
});
