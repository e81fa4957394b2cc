import { readChanges } from "#shared/assistant/changes";
import type { ToolEvent } from "#shared/assistant/conversation";
import { Changes } from "./ai-approvals-diff";
import { formatMoney } from "./layout";

/**
 * What a tool call of the store's assistant answered, shown to the member as a card beside the model's words
 * (issue 24 item 2): a product list links to the products, an order to the order, a proposal shows its full
 * diff with Approve and Reject (item 3). Every value is shown as text (it comes from the database or the
 * model: never markup); a result of a shape this page does not know is shown as its JSON, folded.
 */
export type { ToolEvent };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const items = (v: unknown): Json[] => (isObject(v) && Array.isArray(v.items) ? v.items.filter(isObject) : []);
const text = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
/** Ids go into links only when they are uuids (a model could put anything in a tool's answer shape). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const idOf = (v: unknown): string | null => (typeof v === "string" && UUID.test(v) ? v : null);

export interface CardContext {
  currency: string;
  csrf: string;
  /** The conversation the card is in: where its Approve and Reject come back to. */
  conversationId: string;
}

function Linked({ href, children }: { href: string | null; children: unknown }) {
  return href ? <a href={href}>{children}</a> : <>{children}</>;
}

/** A proposal's Approve or Reject, posted back to its conversation. */
function Decide({ decision, id, ctx }: { decision: "approve" | "reject"; id: string; ctx: CardContext }) {
  return (
    <form method="post" action={`/assistant/${ctx.conversationId}/${decision}`} class={decision === "approve" ? "inline" : "inline reject"}>
      <input type="hidden" name="csrf" value={ctx.csrf} />
      <input type="hidden" name="id" value={id} />
      <button type="submit" class={decision === "approve" ? "small" : "small danger"}>
        {decision === "approve" ? "Approve" : "Reject"}
      </button>
    </form>
  );
}

function Proposal({ p, ctx }: { p: Json; ctx: CardContext }) {
  const id = idOf(p.approvalId);
  const status = text(p.status);
  return (
    <div class="card tool-card proposal" data-tool-card="proposal">
      <p>
        <strong>Proposed change:</strong> {text(p.summary)}
      </p>
      <div class="scroll">
        <Changes changes={readChanges(p.diff)} />
      </div>
      {status === "pending" && id ? (
        <div class="decide">
          <Decide decision="approve" id={id} ctx={ctx} />
          <Decide decision="reject" id={id} ctx={ctx} />
          <p class="muted">Nothing changes until you approve it.</p>
        </div>
      ) : (
        <p class="muted" data-proposal-state={status}>
          {status === "approved" ? "Approved: the change was made." : status === "rejected" ? "Rejected: nothing was changed." : status === "expired" ? "Expired: nothing was changed." : `This proposal is ${status}.`}
          {p.error ? ` ${text(p.error)}` : ""}
        </p>
      )}
    </div>
  );
}

function ProductList({ found, ctx }: { found: Json[]; ctx: CardContext }) {
  return (
    <ul class="tool-list">
      {found.map((p) => {
        const id = idOf(p.id);
        const low = num(p.priceMinMinor);
        const high = num(p.priceMaxMinor);
        return (
          <li>
            <Linked href={id ? `/products/${id}` : null}>{text(p.title)}</Linked>{" "}
            <span class="muted">
              {low === high ? formatMoney(low, ctx.currency) : `${formatMoney(low, ctx.currency)}–${formatMoney(high, ctx.currency)}`} · {text(p.status)}
            </span>
          </li>
        );
      })}
    </ul>
  );
}

function OrderLine({ o, ctx }: { o: Json; ctx: CardContext }) {
  const id = idOf(o.id);
  return (
    <>
      <Linked href={id ? `/orders/${id}` : null}>#{text(o.number)}</Linked>{" "}
      <span class="muted">
        {text(o.status)} · payment {text(o.paymentStatus)} · {text(o.fulfillmentStatus)} · {formatMoney(num(o.total), ctx.currency)}
      </span>
    </>
  );
}

/** A card of a heading and one line per row. */
function ListCard<T>({ kind, title, rows, line }: { kind: string; title: string; rows: readonly T[]; line: (row: T) => unknown }) {
  return (
    <div class="card tool-card" data-tool-card={kind}>
      <h3 class="tool-card-heading">{title}</h3>
      <ul class="tool-list">
        {rows.map((row) => (
          <li>{line(row)}</li>
        ))}
      </ul>
    </div>
  );
}

/** The card of one tool call. */
export function ToolCard({ event, ctx }: { event: ToolEvent; ctx: CardContext }) {
  const { tool, output } = event;
  if (event.isError || (isObject(output) && typeof output.code === "string" && typeof output.message === "string" && !("approvalId" in output))) {
    return (
      <p class="alert tool-card" role="alert" data-tool-card="error">
        {tool}: {isObject(output) ? text(output.message) : "the tool failed."}
      </p>
    );
  }
  if (isObject(output) && "approvalId" in output) return <Proposal p={output} ctx={ctx} />;
  const heading = (label: string) => <h3 class="tool-card-heading">{label}</h3>;
  switch (tool) {
    case "listProducts": {
      const found = items(output);
      return (
        <div class="card tool-card" data-tool-card="products">
          {heading(`Products (${num((output as Json).total) || found.length})`)}
          <ProductList found={found} ctx={ctx} />
        </div>
      );
    }
    case "getProduct": {
      const p = isObject(output) ? output : {};
      const variants = Array.isArray(p.variants) ? p.variants.filter(isObject) : [];
      const id = idOf(p.id);
      return (
        <div class="card tool-card" data-tool-card="product">
          {heading("Product")}
          <p>
            <Linked href={id ? `/products/${id}` : null}>{text(p.title)}</Linked>
          </p>
          <ul class="tool-list">
            {variants.map((v) => (
              <li>
                {text(v.title)} <span class="mono">{text(v.sku)}</span> · {formatMoney(num(v.priceMinor), ctx.currency)}
              </li>
            ))}
          </ul>
        </div>
      );
    }
    case "listOrders":
      return <ListCard kind="orders" title={`Orders (${num((output as Json).total) || items(output).length})`} rows={items(output)} line={(o) => <OrderLine o={o} ctx={ctx} />} />;
    case "getOrder":
      return (
        <div class="card tool-card" data-tool-card="order">
          {heading("Order")}
          <p>
            <OrderLine o={isObject(output) ? output : {}} ctx={ctx} />
          </p>
        </div>
      );
    case "salesSummary": {
      const orders = isObject(output) && isObject(output.orders) ? output.orders : {};
      return (
        <div class="card tool-card" data-tool-card="sales">
          {heading("Sales")}
          <p>
            {num(orders.placed)} order{num(orders.placed) === 1 ? "" : "s"} · sales {formatMoney(num(orders.salesMinor), ctx.currency)} ·{" "}
            {formatMoney(num(orders.paidMinor), ctx.currency)} paid
          </p>
        </div>
      );
    }
    case "inventoryLevels":
      return (
        <ListCard
          kind="stock"
          title="Stock"
          rows={items(output)}
          line={(l) => (
            <>
              {text(l.productTitle)} <span class="mono">{text(l.sku)}</span> at {text(l.locationName)}: {num(l.onHand)} on hand, {num(l.reserved)} reserved
            </>
          )}
        />
      );
    default:
      return (
        <details class="card tool-card" data-tool-card="data">
          <summary>{tool} answered</summary>
          <pre class="scroll">{JSON.stringify(output, null, 2)}</pre>
        </details>
      );
  }
}
