import { Hono } from "hono";
import { AppError } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { listLocations } from "#shared/procedures/inventory";
import { updateTaxIdentity } from "#shared/procedures/tax-identity";
import { INDIAN_STATE_CODES, INDIAN_STATE_NAMES, isIndianStateCode } from "#shared/rules/gst";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { issueErrors, SelectField, TextField } from "./fields";
import { doneNotice, handleFormPost, Notice, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";

/**
 * Settings → Locations (`/settings/locations`): each location's tax identity (docs/gst.md "Tax identity"):
 * GSTIN, legal name, address and the state it ships from; `?edit=<id>` opens one for editing
 * (locations.updateTaxIdentity, settings.write). Anyone who may see the stock (inventory.read) sees the list.
 */
export const locationsPage = new Hono<AdminEnv>();

const PATH = "/settings/locations";
const FIELDS = ["gstin", "legalName", "addressLine1", "addressLine2", "city", "postalCode"] as const;
type Values = Record<(typeof FIELDS)[number] | "state", string>;

const locationNotFound = () => new AppError("NOT_FOUND", "Location not found in this store.");
const stateName = (code: string | null) => (code && isIndianStateCode(code) ? INDIAN_STATE_NAMES[code] : code ? code : "");

/** What the form sends, as the procedure's input: an empty field clears it; the state only without a GSTIN (a GSTIN sets it). */
function taxIdentityInput(field: Field): Record<string, unknown> {
  const value = (name: string) => {
    const text = field(name)?.trim() ?? "";
    return text === "" ? null : text;
  };
  const input: Record<string, unknown> = { id: field("id") };
  for (const name of FIELDS) input[name] = value(name);
  if (input["gstin"] === null) input["state"] = value("state");
  return input;
}

const OPTIONS = [["", "Not set"] as const, ...INDIAN_STATE_CODES.map((code) => [code, INDIAN_STATE_NAMES[code]] as const)];

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const { chrome, me, read } = await storePage(c, { locations: call(listLocations, {}) });
  const canEdit = me.permissions.includes("settings.write");
  const { items } = read.locations();
  const editId = failed ? failed.field("id") : c.req.query("edit");
  let editing: { id: string; name: string; values: Values; errors: Record<string, string> } | undefined;
  if (editId !== undefined) {
    if (!canEdit) throw permissionDenied("settings.write");
    const loc = items.find((l) => l.id === editId);
    if (!loc) throw locationNotFound();
    const stored: Values = {
      gstin: loc.gstin ?? "",
      legalName: loc.legalName ?? "",
      addressLine1: loc.addressLine1 ?? "",
      addressLine2: loc.addressLine2 ?? "",
      city: loc.city ?? "",
      postalCode: loc.postalCode ?? "",
      state: loc.state ?? "",
    };
    const typed = failed ? (Object.fromEntries([...FIELDS, "state"].map((n) => [n, failed.field(n) ?? ""])) as Values) : stored;
    editing = { id: loc.id, name: loc.name, values: typed, errors: issueErrors(failed?.error) };
    if (failed) notice = { ok: false, text: `Not saved: ${failed.error.message}` };
  }

  return c.html(
    <AdminPage title="Locations" chrome={chrome}>
      <h1>Locations</h1>
      <p class="muted">
        Each location that ships is a GST registration: its GSTIN, legal name and address go on the tax invoices of the parcels it ships, and its
        state (which a GSTIN sets) decides CGST + SGST or IGST. Add or rename locations and their stock on <a href="/inventory">Inventory</a>.
      </p>
      <p class="muted" id="e-invoicing">
        These invoices carry no IRN (e-invoicing). If your aggregate turnover has passed ₹5 crore in any year since 2017-18, a B2B invoice
        (a buyer who gave a GSTIN) made here is not a valid tax invoice for you (CGST rule 48(5)): register your B2B invoices on the Invoice
        Registration Portal yourself.
      </p>
      <Notice notice={notice} />
      {editing ? (
        <form method="post" action={PATH} class="card" id="edit">
          <input type="hidden" name="csrf" value={chrome.csrf} />
          <input type="hidden" name="action" value="update" />
          <input type="hidden" name="id" value={editing.id} />
          <h2>Edit {editing.name}</h2>
          <TextField id="gstin" label="GSTIN" value={editing.values.gstin} maxlength={20} autocomplete="off" help="15 characters, e.g. 27ABCDE1234F1Z0. Its first two digits set the state." error={editing.errors["gstin"]} />
          <TextField id="legalName" label="Legal name (as registered)" value={editing.values.legalName} maxlength={200} error={editing.errors["legalName"]} />
          <TextField id="addressLine1" label="Address" value={editing.values.addressLine1} maxlength={200} autocomplete="address-line1" error={editing.errors["addressLine1"]} />
          <TextField id="addressLine2" label="Address line 2 (optional)" value={editing.values.addressLine2} maxlength={200} autocomplete="address-line2" error={editing.errors["addressLine2"]} />
          <TextField id="city" label="City" value={editing.values.city} maxlength={120} autocomplete="address-level2" error={editing.errors["city"]} />
          <TextField id="postalCode" label="PIN code" value={editing.values.postalCode} maxlength={6} inputmode="numeric" autocomplete="postal-code" error={editing.errors["postalCode"]} />
          <SelectField id="state" label="State (only without a GSTIN: a GSTIN sets it)" value={editing.values.state} options={OPTIONS} error={editing.errors["state"]} />
          <button type="submit">Save location</button> <a href={PATH}>Cancel</a>
        </form>
      ) : null}
      <table>
        <thead>
          <tr>
            <th scope="col">Location</th>
            <th scope="col">GSTIN</th>
            <th scope="col">Legal name</th>
            <th scope="col">Address</th>
            {canEdit ? <th scope="col">Actions</th> : null}
          </tr>
        </thead>
        <tbody>
          {items.map((l) => (
            <tr data-location={l.id}>
              <td>
                <strong>{l.name}</strong>
                {l.sellsOnline ? null : <span class="muted"> · does not sell online</span>}
              </td>
              <td>{l.gstin ? <code>{l.gstin}</code> : <span class="muted">none</span>}</td>
              <td>{l.legalName ?? ""}</td>
              <td>{[l.addressLine1, l.addressLine2, l.city, stateName(l.state), l.postalCode].filter(Boolean).join(", ")}</td>
              {canEdit ? (
                <td>
                  <a href={`${PATH}?edit=${l.id}#edit`} aria-label={`Edit ${l.name}`}>
                    Edit
                  </a>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </AdminPage>,
    status,
  );
}

// GET /settings/locations (inventory.read; without it the 403 page). `?edit=<id>` opens one (settings.write).
locationsPage.get(PATH, async (c) => render(c, doneNotice(c, { updated: "Location saved." })));

// POST /settings/locations: save a location's tax identity (session CSRF token required). Another store's id is the 404 page.
locationsPage.post(PATH, (c) =>
  handleFormPost(
    c,
    render,
    `${PATH}?done=updated`,
    { update: (signedIn, field) => pageCall(c, signedIn, updateTaxIdentity, taxIdentityInput(field), ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]) },
    "Choose update.",
  ),
);
