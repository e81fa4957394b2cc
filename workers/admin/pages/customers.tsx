import { Hono } from "hono";
import type { FC } from "hono/jsx";
import { z } from "zod";
import { permissionDenied } from "#shared/pipeline/principal";
import { CONSENT_LINK_DAYS, type ConsentState } from "#shared/marketing/consent";
import { consentRecordsPlan, createCustomer, deleteCustomer, getCustomer, listCustomers, updateCustomer } from "#shared/procedures/customers";
import { customerOrdersPlan } from "#shared/procedures/orders";
import { gatedScope } from "#shared/procedures/scope";
import { pageCall, type AdminContext, type AdminEnv } from "../context";
import { call, planned, storePage } from "./chrome";
import { CheckField, issueErrors, TextArea, TextField } from "./fields";
import { ConfirmCard, doneNotice, handleFormPost, idParam, Notice, type FailedPost, type Field, type FormNotice } from "./form-post";
import { AdminPage, formatMoney } from "./layout";
import { IstTime, StatusBadge, words } from "./order-words";
import { Pager, SearchBar, Section, Table } from "./parts";

/**
 * Customers (issue 13 item 3): `/customers` lists and searches them (no JavaScript: a GET form, `?page=`);
 * `/customers/new` adds one; `/customers/<id>` shows the contact details, marketing consent (its state:
 * none, waiting for the customer's confirmation, confirmed or withdrawn, when and how it last changed, and
 * its records; decision 0021), the private note and the customer's orders, and edits them with the procedures'
 * own validation (E.164 phones, unique emails), each message by its field; roles with `records.delete`
 * delete one behind a confirmation saying what goes and what stays.
 */
export const customersPage = new Hono<AdminEnv>();

const PAGE_SIZE = 20;
const FIELDS = ["email", "phone", "firstName", "lastName", "city", "note"] as const;
type Draft = Record<(typeof FIELDS)[number], string> & { acceptsMarketing: boolean };
const listQuery = z.object({ page: z.coerce.number().int().min(1).max(100_000).catch(1), query: z.string().trim().max(200).catch("") });

const draftOf = (field: Field): Draft => ({
  ...(Object.fromEntries(FIELDS.map((f) => [f, field(f) ?? ""])) as Record<(typeof FIELDS)[number], string>),
  acceptsMarketing: field("acceptsMarketing") === "yes",
});

/** The procedures' input: blank fields left out when creating, cleared (null) when editing. */
function inputOf(draft: Draft, id?: string): Record<string, unknown> {
  const input: Record<string, unknown> = id ? { id } : {};
  for (const f of FIELDS) {
    const value = draft[f].trim();
    if (value) input[f] = f === "email" ? value.toLowerCase() : value;
    else if (id) input[f] = null;
  }
  input["acceptsMarketing"] = draft.acceptsMarketing;
  return input;
}

const CustomerForm: FC<{ csrf: string; action: string; draft: Draft; errors: Record<string, string>; submit: string }> = ({ csrf, action, draft, errors, submit }) => (
  <form method="post" action={action} class="card" id="customer-form">
    <input type="hidden" name="csrf" value={csrf} />
    <input type="hidden" name="action" value="save" />
    <TextField id="email" label="Email" type="email" value={draft.email} error={errors["email"]} autocomplete="off" />
    <TextField id="phone" label="Mobile (E.164, e.g. +919876543210)" type="tel" value={draft.phone} error={errors["phone"]} />
    <TextField id="firstName" label="First name" value={draft.firstName} error={errors["firstName"]} maxlength={120} />
    <TextField id="lastName" label="Last name" value={draft.lastName} error={errors["lastName"]} maxlength={120} />
    <TextField id="city" label="City" value={draft.city} error={errors["city"]} maxlength={120} />
    <CheckField id="acceptsMarketing" label="Agreed to receive marketing emails (confirmed: tick only when the customer told you so)" checked={draft.acceptsMarketing} error={errors["acceptsMarketing"]} />
    <TextArea id="note" label="Private note (staff only)" value={draft.note} error={errors["note"]} rows={3} />
    <button type="submit">{submit}</button>
  </form>
);

const EMPTY: Draft = { email: "", phone: "", firstName: "", lastName: "", city: "", note: "", acceptsMarketing: false };
/** A consent state as the merchant reads it; only `confirmed` lets marketing reach the customer. */
const CONSENT_WORDS: Readonly<Record<ConsentState, string>> = {
  none: "Not subscribed",
  pending: "Waiting for confirmation",
  confirmed: "Subscribed",
  withdrawn: "Unsubscribed",
};
/** Where a consent change came from. */
const SOURCE_WORDS: Readonly<Record<string, string>> = {
  staff: "a member, in the admin",
  checkout: "checkout (box ticked)",
  confirmation_link: "the customer, through the confirmation email",
  unsubscribe_link: "the customer, through an unsubscribe link",
  import: "an import",
};
const sourceWords = (source: string | null) => (source ? (SOURCE_WORDS[source] ?? words(source)) : "not recorded");

/** The consent's state, when and how it got there; a request shows when its link expires. */
const ConsentFacts: FC<{ customer: Customer; records: ConsentRecord[] }> = ({ customer, records }) => {
  const requested = customer.marketingConsentRequestedAt;
  const expires = requested ? new Date(requested.getTime() + CONSENT_LINK_DAYS * 86_400_000) : null;
  return (
    <>
      <dd data-consent={customer.marketingConsent}>
        {CONSENT_WORDS[customer.marketingConsent]}
        {customer.marketingConsentUpdatedAt ? (
          <>
            {" "}
            since <IstTime at={customer.marketingConsentUpdatedAt} /> (from {sourceWords(customer.marketingConsentSource)})
          </>
        ) : null}
        {customer.marketingConsent === "pending" && expires ? (
          <div class="muted">
            A confirmation email was sent; {expires.getTime() > Date.now() ? "its link works until " : "its link expired "}
            <IstTime at={expires} />. No marketing reaches them until they confirm.
          </div>
        ) : null}
      </dd>
      {records.length > 0 ? (
        <>
          <dt>Consent records</dt>
          <dd>
            <ul id="consent-records">
              {records.map((r) => (
                <li data-state={r.state} data-source={r.source ?? ""}>
                  <IstTime at={r.recordedAt} />: {CONSENT_WORDS[r.state]}, from {sourceWords(r.source)}
                </li>
              ))}
            </ul>
          </dd>
        </>
      ) : null}
    </>
  );
};

const nameOf = (c: { firstName: string | null; lastName: string | null }) => [c.firstName, c.lastName].filter(Boolean).join(" ") || "(no name)";

customersPage.get("/customers", async (c) => {
  const q = listQuery.parse({ page: c.req.query("page"), query: c.req.query("query") });
  const { chrome, me, read } = await storePage(c, { customers: call(listCustomers, { page: q.page, pageSize: PAGE_SIZE, ...(q.query ? { query: q.query } : {}) }) });
  const result = read.customers();
  const link = (page: number) => `/customers?${new URLSearchParams({ ...(q.query ? { query: q.query } : {}), ...(page > 1 ? { page: String(page) } : {}) })}`;
  return c.html(
    <AdminPage title="Customers" chrome={chrome}>
      <h1>Customers</h1>
      <Notice notice={doneNotice(c, DONE)} />
      {me.permissions.includes("customers.write") ? (
        <p>
          <a href="/customers/new">New customer</a>
        </p>
      ) : null}
      <SearchBar action="/customers" id="customer-query" label="Search customers" placeholder="Name, email or phone" value={q.query} />
      {result.items.length === 0 ? (
        <p class="card">{q.query ? "No customer matches." : "No customers yet."}</p>
      ) : (
        <Table columns={[{ label: "Customer" }, { label: "Marketing" }, { label: "Since" }]}>
          {result.items.map((x) => (
            <tr data-customer={x.id}>
              <td>
                <a href={`/customers/${x.id}`}>{nameOf(x)}</a>
              </td>
              <td data-consent={x.marketingConsent}>{CONSENT_WORDS[x.marketingConsent]}</td>
              <td>
                <IstTime at={x.createdAt} />
              </td>
            </tr>
          ))}
        </Table>
      )}
      <Pager list={result} noun="customers" link={link} />
    </AdminPage>,
  );
});

async function renderNew(c: AdminContext, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const { chrome, me } = await storePage(c);
  if (!me.permissions.includes("customers.write")) throw permissionDenied("customers.write");
  return c.html(
    <AdminPage title="New customer" chrome={chrome}>
      <p>
        <a href="/customers">← Customers</a>
      </p>
      <h1>New customer</h1>
      <Notice notice={notice} />
      <CustomerForm csrf={chrome.csrf} action="/customers/new" draft={failed ? draftOf(failed.field) : EMPTY} errors={issueErrors(failed?.error)} submit="Add customer" />
    </AdminPage>,
    status,
  );
}

type Customer = Awaited<ReturnType<typeof getCustomer.run>>;
type ConsentRecord = ReturnType<ReturnType<typeof consentRecordsPlan>["finish"]>[number];

/** What deleting a customer takes and what it leaves, said before it happens. */
const DeleteConfirm: FC<{ customer: Customer; orders: number | null; csrf: string }> = ({ customer, orders, csrf }) => (
  <ConfirmCard id="confirm-delete" heading={`Delete ${nameOf(customer)} for good?`} to={`/customers/${customer.id}`} csrf={csrf} action="delete" label={`Delete ${nameOf(customer)}`} keep="Keep them">
    This deletes their contact details, note and marketing consent, and any marketing email still waiting for them. It cannot be undone.
    {orders ? ` Their ${orders} order${orders === 1 ? "" : "s"} stay, with the email they were placed with.` : ""} A later order with this email adds them again,
    without consent.
  </ConfirmCard>
);

async function renderCustomer(c: AdminContext, id: string, notice?: FormNotice, status: 200 | 400 | 409 = 200, failed?: FailedPost) {
  const { chrome, me, read } = await storePage(c, {
    customer: call(getCustomer, { id }),
    orders: planned((q, scope) => customerOrdersPlan(q, gatedScope(scope, "orders.read"), id, 20)),
    consent: planned((q, scope) => consentRecordsPlan(q, scope.store, id, 10)),
  });
  const customer = read.customer();
  const canWrite = me.permissions.includes("customers.write");
  const canDelete = me.permissions.includes("records.delete");
  const confirming = c.req.query("confirm") === "delete";
  if (confirming && !canDelete) throw permissionDenied("records.delete");
  const orders = customer.email && me.permissions.includes("orders.read") ? read.orders() : null;
  const draft: Draft = failed
    ? draftOf(failed.field)
    : { email: customer.email ?? "", phone: customer.phone ?? "", firstName: customer.firstName ?? "", lastName: customer.lastName ?? "", city: customer.city ?? "", note: customer.note ?? "", acceptsMarketing: customer.acceptsMarketing };
  const currency = me.store.currency;
  return c.html(
    <AdminPage title={nameOf(customer)} chrome={chrome}>
      <p>
        <a href="/customers">← Customers</a>
      </p>
      <h1>{nameOf(customer)}</h1>
      <Notice notice={notice} />
      {confirming ? <DeleteConfirm customer={customer} orders={orders?.total ?? null} csrf={chrome.csrf} /> : null}
      <dl class="facts">
        <dt>Email</dt>
        <dd>{customer.email ?? "—"}</dd>
        <dt>Mobile</dt>
        <dd>{customer.phone ?? "—"}</dd>
        <dt>Marketing</dt>
        <ConsentFacts customer={customer} records={read.consent()} />
      </dl>
      {orders ? (
        <Section id="orders" title="Orders">
          {orders.items.length === 0 ? (
            <p class="muted">No orders with this email yet.</p>
          ) : (
            <Table columns={[{ label: "Order" }, { label: "Placed" }, { label: "Payment" }, { label: "Total", num: true }]}>
              {orders.items.map((o) => (
                <tr>
                  <td>
                    <a href={`/orders/${o.id}`}>#{o.number}</a>
                  </td>
                  <td>
                    <IstTime at={o.placedAt} />
                  </td>
                  <td>
                    <StatusBadge value={o.paymentStatus} label="Payment" />
                  </td>
                  <td class="num">{formatMoney(o.total, currency)}</td>
                </tr>
              ))}
            </Table>
          )}
          {orders.total > orders.items.length ? (
            <p>
              <a href={`/orders?${new URLSearchParams({ email: customer.email ?? "" })}`}>All {orders.total} orders</a>
            </p>
          ) : null}
        </Section>
      ) : null}
      {canWrite ? (
        <Section id="edit" title="Edit">
          <CustomerForm csrf={chrome.csrf} action={`/customers/${id}`} draft={draft} errors={issueErrors(failed?.error)} submit="Save customer" />
        </Section>
      ) : customer.note ? (
        <p class="card">{customer.note}</p>
      ) : null}
      {canDelete && !confirming ? (
        <p>
          <a href={`/customers/${id}?confirm=delete#confirm-delete`} class="danger">
            Delete customer…
          </a>
        </p>
      ) : null}
    </AdminPage>,
    status,
  );
}

const DONE: Record<string, string> = { created: "Customer added.", saved: "Customer saved.", deleted: "Customer deleted." };

customersPage.get("/customers/new", (c) => renderNew(c));
customersPage.post("/customers/new", (c) =>
  handleFormPost(
    c,
    renderNew,
    "/customers",
    {
      save: async (signedIn, field) => {
        const made = await pageCall(c, signedIn, createCustomer, inputOf(draftOf(field)), ["BAD_REQUEST", "CONFLICT"]);
        return { redirectTo: `/customers/${made.id}?done=created` };
      },
    },
    "Choose Add customer.",
  ),
);

customersPage.get("/customers/:id", (c) => renderCustomer(c, idParam(c, "Customer"), doneNotice(c, DONE)));
customersPage.post("/customers/:id", (c) => {
  const id = idParam(c, "Customer");
  return handleFormPost(
    c,
    (ctx, n, s, f) => renderCustomer(ctx, id, n, s, f),
    (action) => (action === "delete" ? "/customers?done=deleted" : `/customers/${id}?done=saved`),
    {
      save: (signedIn, field) => pageCall(c, signedIn, updateCustomer, inputOf(draftOf(field), id), ["BAD_REQUEST", "CONFLICT", "NOT_FOUND"]),
      delete: (signedIn) => pageCall(c, signedIn, deleteCustomer, { id }, ["NOT_FOUND"]),
    },
    "Choose Save customer or Delete.",
  );
});
