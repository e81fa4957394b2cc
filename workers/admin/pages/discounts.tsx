import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { DISCOUNT_KINDS } from "#shared/db/schema";
import { AppError } from "#shared/core/errors";
import { permissionDenied } from "#shared/pipeline/principal";
import { createDiscount, disableDiscount, listDiscounts, updateDiscount } from "#shared/procedures/discounts";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, storePage } from "./chrome";
import { issueErrors, SelectField, TextField } from "./fields";
import { doneNotice, formCurrency, handleFormPost, Notice, RowAction, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage, formatMoney } from "./layout";
import { amountText, minorUnitsOf } from "./money";
import { IST_OFFSET, IstTime, StatusBadge } from "./order-words";
import { Pager, SearchBar, Table } from "./parts";

/**
 * Discounts (issue 13 item 4): `/discounts` lists the codes with their state (live, scheduled, expired, used
 * up, disabled), creates one, edits one (`?edit=<id>`) and disables one. Values are a whole percent or an
 * amount in rupees; dates are typed in India's time (datetime-local) and sent with +05:30.
 */
export const discountsPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;
const STATE_WORDS: Record<string, string> = { live: "Live", scheduled: "Scheduled", expired: "Expired", used_up: "Used up", disabled: "Disabled" };
const listQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).catch(1), query: z.string().trim().max(100).catch("") });

type Discount = Awaited<ReturnType<typeof listDiscounts.run>>["items"][number];
interface Draft {
  code: string;
  kind: string;
  value: string;
  startsAt: string;
  endsAt: string;
  usageLimit: string;
}
const EMPTY: Draft = { code: "", kind: "percentage", value: "", startsAt: "", endsAt: "", usageLimit: "" };

/** An instant as the datetime-local value India's clock shows. */
const istLocal = (d: Date | string | null) => (d ? new Date(new Date(d).getTime() + 330 * 60_000).toISOString().slice(0, 16) : "");

const draftOf = (field: Field): Draft => ({
  code: field("code") ?? "",
  kind: field("kind") ?? "percentage",
  value: field("value") ?? "",
  startsAt: field("startsAt") ?? "",
  endsAt: field("endsAt") ?? "",
  usageLimit: field("usageLimit") ?? "",
});

const draftOfDiscount = (d: Discount, currency: string): Draft => ({
  code: d.code,
  kind: d.kind,
  value: d.kind === "percentage" ? String(d.value) : amountText(d.value, currency),
  startsAt: istLocal(d.startsAt),
  endsAt: istLocal(d.endsAt),
  usageLimit: d.usageLimit === null ? "" : String(d.usageLimit),
});

/** The procedures' input from the form; an amount that is not money is refused here, by its field. */
function inputOf(draft: Draft, currency: string, id?: string): Record<string, unknown> {
  const at = (local: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) ? `${local}:00${IST_OFFSET}` : local);
  let value: unknown = draft.value.trim();
  if (draft.kind === "fixed_amount") {
    const money = minorUnitsOf(draft.value, currency);
    if ("error" in money) throw new AppError("BAD_REQUEST", money.error, { issues: [{ path: "value", message: money.error }] });
    value = money.minor ?? "";
  } else if (/^\d{1,3}$/.test(draft.value.trim())) value = Number(draft.value.trim());
  const limit = draft.usageLimit.trim();
  const input: Record<string, unknown> = {
    ...(id ? { id } : { kind: draft.kind }),
    code: draft.code,
    value,
    ...(draft.startsAt.trim() ? { startsAt: at(draft.startsAt.trim()) } : {}),
    ...(draft.endsAt.trim() ? { endsAt: at(draft.endsAt.trim()) } : id ? { endsAt: null } : {}),
    ...(limit ? { usageLimit: /^\d{1,10}$/.test(limit) ? Number(limit) : limit } : id ? { usageLimit: null } : {}),
  };
  return input;
}

const DiscountForm: FC<{ csrf: string; currency: string; action: "create" | "update"; id?: string; draft: Draft; errors: Record<string, string>; heading: string }> = ({
  csrf,
  currency,
  action,
  id,
  draft,
  errors,
  heading,
}) => {
  const idOf = (name: string) => (action === "create" ? `new-${name}` : `edit-${name}`);
  return (
    <form method="post" action="/discounts" class="card" id={action === "update" ? "edit" : "new-discount"}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="currency" value={currency} />
      <input type="hidden" name="action" value={action} />
      {id ? <input type="hidden" name="id" value={id} /> : null}
      <h2>{heading}</h2>
      <TextField id={idOf("code")} name="code" label="Code" value={draft.code} error={errors["code"]} maxlength={40} help="What shoppers type at checkout, e.g. WELCOME10." />
      {action === "create" ? (
        <SelectField id={idOf("kind")} name="kind" label="Kind" value={draft.kind} error={errors["kind"]} options={DISCOUNT_KINDS.map((k) => [k, k === "percentage" ? "Percentage off" : "Amount off (₹)"] as const)} />
      ) : (
        <input type="hidden" name="kind" value={draft.kind} />
      )}
      <TextField id={idOf("value")} name="value" label={draft.kind === "fixed_amount" && action === "update" ? "Amount off (₹)" : "Value (percent, or ₹ for an amount off)"} value={draft.value} error={errors["value"]} inputmode="decimal" />
      <TextField id={idOf("startsAt")} name="startsAt" type="datetime-local" label="Starts (India time; blank: now)" value={draft.startsAt} error={errors["startsAt"]} />
      <TextField id={idOf("endsAt")} name="endsAt" type="datetime-local" label="Ends (optional)" value={draft.endsAt} error={errors["endsAt"]} />
      <TextField id={idOf("usageLimit")} name="usageLimit" label="Uses in total (optional)" value={draft.usageLimit} error={errors["usageLimit"]} inputmode="numeric" />
      <button type="submit">{action === "create" ? "Create discount" : "Save discount"}</button>
      {action === "update" ? (
        <>
          {" "}
          <a href="/discounts">Cancel</a>
        </>
      ) : null}
    </form>
  );
};

async function render(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const q = listQuery.parse({ page: c.req.query("page"), query: c.req.query("query") });
  const { chrome, me, read } = await storePage(c, { discounts: call(listDiscounts, { page: q.page, pageSize: PAGE_SIZE, ...(q.query ? { query: q.query } : {}) }) });
  const canWrite = me.permissions.includes("discounts.write");
  const result = read.discounts();
  const currency = me.store.currency;
  const errors = issueErrors(failed?.error);
  const editId = failed?.action === "update" ? failed.field("id") : c.req.query("edit");
  if (editId !== undefined && !failed && !canWrite) throw permissionDenied("discounts.write");
  const editing = editId === undefined ? undefined : result.items.find((d) => d.id === editId);
  if (editId !== undefined && !editing && !failed) throw new AppError("NOT_FOUND", "Discount not found in this store.");
  const link = (page: number) => `/discounts?${new URLSearchParams({ ...(q.query ? { query: q.query } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  return c.html(
    <AdminPage title="Discounts" chrome={chrome}>
      <h1>Discounts</h1>
      <Notice notice={notice} />
      {editing || failed?.action === "update" ? (
        <DiscountForm
          currency={currency}
          csrf={chrome.csrf}
          action="update"
          id={editId}
          draft={failed?.action === "update" ? draftOf(failed.field) : draftOfDiscount(editing!, currency)}
          errors={failed?.action === "update" ? errors : {}}
          heading={`Edit ${editing?.code ?? failed?.field("code") ?? ""}`}
        />
      ) : null}
      <SearchBar action="/discounts" id="discount-query" label="Search codes" placeholder="Code" value={q.query} />
      {result.items.length === 0 ? (
        <p class="card">{q.query ? "No code matches." : "No discounts yet."}</p>
      ) : (
        <Table columns={[{ label: "Code" }, { label: "Off" }, { label: "State" }, { label: "Runs" }, { label: "Used", num: true }, ...(canWrite ? [{ label: "Actions" }] : [])]}>
          {result.items.map((d) => (
            <tr data-discount={d.code}>
              <td>
                <strong>{d.code}</strong>
              </td>
              <td>{d.kind === "percentage" ? `${d.value} %` : formatMoney(d.value, currency)}</td>
              <td>
                <StatusBadge value={d.state} label="State" /> {STATE_WORDS[d.state]}
              </td>
              <td>
                <IstTime at={d.startsAt} /> → {d.endsAt ? <IstTime at={d.endsAt} /> : "no end"}
              </td>
              <td class="num">
                {d.usageCount}
                {d.usageLimit === null ? "" : ` of ${d.usageLimit}`}
              </td>
              {canWrite ? (
                <td>
                  <a href={`/discounts?${q.page > 1 ? `page=${q.page}&` : ""}edit=${d.id}#edit`} aria-label={`Edit ${d.code}`}>
                    Edit
                  </a>{" "}
                  {d.status === "active" ? <RowAction to="/discounts" csrf={chrome.csrf} fields={{ id: d.id }} action="disable" label="Disable" ariaLabel={`Disable ${d.code}`} /> : null}
                </td>
              ) : null}
            </tr>
          ))}
        </Table>
      )}
      <Pager list={result} noun="codes" link={link} />
      {canWrite ? (
        <DiscountForm csrf={chrome.csrf} currency={currency} action="create" draft={failed?.action === "create" ? draftOf(failed.field) : EMPTY} errors={failed?.action === "create" ? errors : {}} heading="New discount" />
      ) : null}
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { create: "Discount created.", update: "Discount saved.", disable: "Discount disabled: it can no longer be used." };

discountsPage.get("/discounts", (c) => render(c, doneNotice(c, DONE)));

discountsPage.post("/discounts", (c) =>
  handleFormPost(
    c,
    render,
    (action) => `/discounts?done=${action}`,
    {
      create: async (signedIn, field, base) => pageCall(c, signedIn, createDiscount, inputOf(draftOf(field), await formCurrency(field, base)), ["BAD_REQUEST", "CONFLICT"]),
      update: async (signedIn, field, base) => pageCall(c, signedIn, updateDiscount, inputOf(draftOf(field), await formCurrency(field, base), field("id") ?? ""), ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      disable: (signedIn, field) => pageCall(c, signedIn, disableDiscount, { id: field("id") ?? "" }, ["BAD_REQUEST", "NOT_FOUND"]),
    },
    "Choose Create, Save or Disable.",
  ),
);
