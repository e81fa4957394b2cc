import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { ADJUSTMENT_REASONS } from "#shared/db/schema";
import { adjustInventory, createLocation, inventoryHistory, listLevels, listLocations, updateLocation } from "#shared/procedures/inventory";
import { hasNextPage } from "#shared/procedures/paging";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { CheckField, issueErrors, TextField } from "./fields";
import { doneNotice, handleFormPost, idParam, Notice, RowAction, type FailedPost, type FormNotice } from "./form-post";
import { AdminPage } from "./layout";
import { IstTime, words } from "./order-words";
import { FieldError, Pager, SearchBar, Section, Table } from "./parts";

/**
 * Inventory (issue 13 item 2): `/inventory` lists stock by variant and location with search, a location
 * filter and paging (inventory.levels), each row with an adjust form (a positive or negative change and its
 * reason; never below zero), and the locations (create; sells online on or off). `/inventory/<variantId>`
 * is a variant's history of changes. The product page posts its "Add stock" form here too.
 */
export const inventoryPage = new Hono<AdminEnv>();

const PAGE_SIZE = 25;
const listQuery = z.object({
  page: z.coerce.number().int().min(1).max(100_000).catch(1),
  query: z.string().trim().max(200).catch(""),
  location: z.uuid().or(z.literal("")).catch(""),
});
export const REASON_OPTIONS = ADJUSTMENT_REASONS.map((r) => [r, words(r)] as const);
/** Where an adjust form may send the member back: this page or a product's page. */
const RETURN = /^\/(inventory(\?[\w=&%.-]*)?|products\/[0-9a-f-]{36})$/;

/** The adjust form's fields, for one row (`key` keeps the ids unique on a page of rows). */
export const AdjustFields: FC<{ keyId: string; delta: string; reason: string; errors: Record<string, string>; showLabels?: boolean }> = ({ keyId, delta, reason, errors, showLabels }) => (
  <>
    <label for={`${keyId}-delta`} class={showLabels ? undefined : "visually-hidden"}>
      Change (units, − to remove)
    </label>
    <input
      id={`${keyId}-delta`}
      name="delta"
      type="number"
      step="1"
      value={delta}
      required
      placeholder="+/− units"
      aria-invalid={errors["delta"] ? "true" : undefined}
      aria-describedby={errors["delta"] ? `${keyId}-delta-error` : undefined}
    />
    <label for={`${keyId}-reason`} class={showLabels ? undefined : "visually-hidden"}>
      Reason
    </label>
    <select id={`${keyId}-reason`} name="reason">
      {REASON_OPTIONS.map(([value, label]) => (
        <option value={value} selected={value === reason}>
          {label}
        </option>
      ))}
    </select>
    <FieldError id={`${keyId}-delta-error`} error={errors["delta"]} />
  </>
);

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const q = listQuery.parse({ page: c.req.query("page"), query: c.req.query("query"), location: c.req.query("location") });
  const { chrome, me, read } = await storePage(c, {
    levels: call(listLevels, { page: q.page, pageSize: PAGE_SIZE, ...(q.query ? { query: q.query } : {}), ...(q.location ? { locationId: q.location } : {}) }),
    locations: call(listLocations, {}),
  });
  const canWrite = me.permissions.includes("inventory.write");
  const [levels, locations] = [read.levels(), read.locations()];
  const errors = issueErrors(failed?.error);
  const failedRow = failed?.action === "adjust" ? `${failed.field("variantId")}:${failed.field("locationId")}` : undefined;
  const link = (page: number) => `/inventory?${new URLSearchParams({ ...(q.query ? { query: q.query } : {}), ...(q.location ? { location: q.location } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  const here = link(q.page);
  return c.html(
    <AdminPage title="Inventory" chrome={chrome}>
      <h1>Inventory</h1>
      <Notice notice={notice} />
      <SearchBar action="/inventory" id="inventory-query" label="Search by product or SKU" placeholder="Product title or SKU" value={q.query}>
        <label for="inventory-location" class="visually-hidden">
          Location
        </label>
        <select id="inventory-location" name="location">
          <option value="">All locations</option>
          {locations.items.map((l) => (
            <option value={l.id} selected={l.id === q.location}>
              {l.name}
            </option>
          ))}
        </select>
      </SearchBar>
      {levels.items.length === 0 ? (
        <p class="card">{q.query || q.location ? "No stock matches." : "No stock recorded yet. Add stock from a product's page."}</p>
      ) : (
        <Table columns={[{ label: "Product" }, { label: "Location" }, { label: "On hand", num: true }, { label: "Reserved", num: true }, { label: "Available", num: true }, ...(canWrite ? [{ label: "Adjust" }] : [])]}>
          {levels.items.map((l) => {
            const key = `${l.variantId}:${l.locationId}`;
            const mine = key === failedRow;
            return (
              <tr data-level={`${l.sku ?? l.variantId}@${l.locationName}`}>
                <td>
                  <a href={`/products/${l.productId}`}>{l.productTitle}</a> · {l.variantTitle}
                  <div class="muted">
                    {l.sku ?? "no SKU"} · <a href={`/inventory/${l.variantId}`}>History</a>
                  </div>
                </td>
                <td>
                  {l.locationName}
                  {l.sellsOnline ? null : <div class="muted">not sold online</div>}
                </td>
                <td class="num">{l.onHand}</td>
                <td class="num">{l.reserved}</td>
                <td class="num">{l.available}</td>
                {canWrite ? (
                  <td>
                    <form method="post" action="/inventory" class="inline">
                      <input type="hidden" name="csrf" value={chrome.csrf} />
                      <input type="hidden" name="action" value="adjust" />
                      <input type="hidden" name="variantId" value={l.variantId} />
                      <input type="hidden" name="locationId" value={l.locationId} />
                      <input type="hidden" name="return" value={here} />
                      <AdjustFields keyId={`adj-${l.variantId}-${l.locationId}`} delta={mine ? (failed!.field("delta") ?? "") : ""} reason={mine ? (failed!.field("reason") ?? "received") : "received"} errors={mine ? errors : {}} />
                      <button type="submit" aria-label={`Adjust ${l.productTitle} ${l.variantTitle} at ${l.locationName}`}>
                        Adjust
                      </button>
                    </form>
                  </td>
                ) : null}
              </tr>
            );
          })}
        </Table>
      )}
      <Pager list={levels} noun="stock rows" link={link} />
      <Section id="locations" title="Locations">
        <Table columns={[{ label: "Location" }, { label: "City" }, { label: "Online" }, ...(canWrite ? [{ label: "Change" }] : [])]}>
          {locations.items.map((l) => (
            <tr data-location={l.name}>
              <td>{l.name}</td>
              <td>{l.city ?? "—"}</td>
              <td>{l.sellsOnline ? "Sells online" : "Not sold online"}</td>
              {canWrite ? (
                <td>
                  <RowAction
                    to="/inventory"
                    csrf={chrome.csrf}
                    fields={{ id: l.id, sellsOnline: l.sellsOnline ? "no" : "yes" }}
                    action="online"
                    label={l.sellsOnline ? "Stop selling online" : "Sell online"}
                    ariaLabel={`${l.sellsOnline ? "Stop selling online" : "Sell online"}: ${l.name}'s stock`}
                  />
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
        {canWrite ? (
          <form method="post" action="/inventory" class="card" id="new-location">
            <input type="hidden" name="csrf" value={chrome.csrf} />
            <input type="hidden" name="action" value="location" />
            <h3>New location</h3>
            <TextField id="location-name" name="name" label="Name" value={failed?.action === "location" ? (failed.field("name") ?? "") : ""} error={failed?.action === "location" ? errors["name"] : undefined} maxlength={120} />
            <TextField id="location-city" name="city" label="City (optional)" value={failed?.action === "location" ? (failed.field("city") ?? "") : ""} error={failed?.action === "location" ? errors["city"] : undefined} maxlength={120} />
            <CheckField id="location-online" name="sellsOnline" label="Its stock sells online" checked={failed?.action === "location" ? failed.field("sellsOnline") === "yes" : true} />
            <button type="submit">Add location</button>
          </form>
        ) : null}
      </Section>
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { adjusted: "Stock adjusted.", location: "Location added.", online: "Location changed." };

inventoryPage.get("/inventory", (c) => render(c, doneNotice(c, DONE)));

/** A whole number typed in a form, as a number; anything else is passed on for the procedure to refuse by its field. */
const wholeNumber = (raw: string | undefined) => (raw !== undefined && /^[+-]?\d{1,9}$/.test(raw.trim()) ? Number(raw.trim()) : (raw ?? ""));

const withDone = (path: string, done: string) => `${path}${path.includes("?") ? "&" : "?"}done=${done}`;

inventoryPage.post("/inventory", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/inventory?done=${action === "adjust" ? "adjusted" : action}`,
    {
      adjust: async (signedIn, field) => {
        const note = field("note")?.trim();
        await pageCall(
          c,
          signedIn,
          adjustInventory,
          { variantId: field("variantId") ?? "", locationId: field("locationId") ?? "", delta: wholeNumber(field("delta")), reason: field("reason") ?? "", ...(note ? { note } : {}) },
          ["BAD_REQUEST", "NOT_FOUND"],
        );
        const back = field("return") ?? "";
        return { redirectTo: withDone(RETURN.test(back) ? back : "/inventory", "adjusted") };
      },
      location: (signedIn, field) =>
        pageCall(c, signedIn, createLocation, { name: field("name") ?? "", sellsOnline: field("sellsOnline") === "yes", ...(field("city")?.trim() ? { city: field("city")!.trim() } : {}) }, ["BAD_REQUEST", "CONFLICT"]),
      online: (signedIn, field) => pageCall(c, signedIn, updateLocation, { id: field("id") ?? "", sellsOnline: field("sellsOnline") === "yes" }, ["BAD_REQUEST", "NOT_FOUND"]),
    },
    "Choose Adjust, Add location or a location's change.",
  ),
);

// GET /inventory/<variantId>: the variant's stock changes, newest first.
inventoryPage.get("/inventory/:variantId", async (c) => {
  const variantId = idParam(c, "Variant", "variantId");
  const page = Math.max(1, Math.min(100_000, Number.parseInt(c.req.query("page") ?? "1", 10) || 1));
  const { chrome, read } = await storePage(c, { history: call(inventoryHistory, { variantId, page, pageSize: PAGE_SIZE }) });
  const history = read.history();
  return c.html(
    <AdminPage title="Stock history" chrome={chrome}>
      <p>
        <a href="/inventory">← Inventory</a>
      </p>
      <h1>Stock history</h1>
      {history.items.length === 0 ? (
        <p class="card">No changes recorded for this variant in this store.</p>
      ) : (
        <Table columns={[{ label: "When" }, { label: "Location" }, { label: "Change", num: true }, { label: "On hand after", num: true }, { label: "Reason" }]}>
          {history.items.map((h) => (
            <tr data-change={h.reason}>
              <td>
                <IstTime at={h.createdAt} />
              </td>
              <td>{h.locationName}</td>
              <td class="num">{h.delta > 0 ? `+${h.delta}` : h.delta}</td>
              <td class="num">{h.onHandAfter}</td>
              <td>
                {words(h.reason)}
                {h.note ? <div class="muted">{h.note}</div> : null}
                {h.byMember ? null : <div class="muted">by the system</div>}
              </td>
            </tr>
          ))}
        </Table>
      )}
      <nav class="pager" aria-label="Pages">
        {page > 1 ? <a href={`/inventory/${variantId}?page=${page - 1}`}>← Newer</a> : null}
        {hasNextPage(history) ? <a href={`/inventory/${variantId}?page=${page + 1}`}>Older →</a> : null}
      </nav>
    </AdminPage>,
  );
});
