import type { FC } from "hono/jsx";
import { z } from "zod";
import type { Permission } from "#shared/auth/permissions";
import { badRequest, type FieldIssue } from "#shared/core/errors";
import { issuesOf } from "#shared/core/errors";
import type { OrderDetail } from "#shared/orders/order-detail";
import { cancelOrderProcedure, setOrderStatus } from "#shared/procedures/orders";
import type { StoreProcedure } from "#shared/procedures/define";
import type { FailedPost, Field } from "./form-post";
import { FieldError, Section } from "./parts";

/**
 * The actions of the order page (./order-detail.tsx), one entry each: who may (a permission), when the
 * order's state offers it, the fields of its form (read with zod), and the procedure it calls. The page
 * shows an action's form only when both hold; the procedure still decides (its 403 or 409 is shown).
 * Adding an action is one more `orderAction({...})` in ORDER_ACTIONS.
 */

/** Calls a procedure for the signed-in member, as pages do (pageCall): a 400, 404 or 409 comes back as thrown. */
export type CallProcedure = (proc: StoreProcedure, input: unknown) => Promise<unknown>;

export interface ActionField {
  name: string;
  label: string;
  kind: "text" | "textarea" | "select";
  required: boolean;
  maxlength: number;
  placeholder?: string;
  /** For a select: its choices, from the order (e.g. its parcels not shipped yet). */
  options?: (order: OrderDetail) => { value: string; label: string }[];
}

export interface OrderAction {
  /** The form's `action` value, and `?done=<name>` after it worked. */
  name: string;
  /** The button. */
  label: string;
  /** One sentence above the button: what it does. */
  intro: string;
  permission: Permission;
  /** Whether the order's state offers it now. */
  when: (order: OrderDetail) => boolean;
  fields: readonly ActionField[];
  danger: boolean;
  /** The flash after the redirect, of the order as it now is. */
  done: (order: OrderDetail) => string;
  /** Reads the posted fields (400 naming a field) and calls the procedure. */
  submit: (call: CallProcedure, orderId: string, field: Field) => Promise<unknown>;
}

interface ActionSpec<I> extends Omit<OrderAction, "submit" | "danger" | "fields"> {
  fields?: readonly ActionField[];
  danger?: boolean;
  /** The form's fields, by name, as the procedure's input needs them. */
  input: z.ZodType<I>;
  run: (call: CallProcedure, orderId: string, input: I) => Promise<unknown>;
}

export function orderAction<I>(spec: ActionSpec<I>): OrderAction {
  const { input, run, ...rest } = spec;
  const fields = spec.fields ?? [];
  return {
    ...rest,
    fields,
    danger: spec.danger ?? false,
    async submit(call, orderId, field) {
      const parsed = input.safeParse(Object.fromEntries(fields.map((f) => [f.name, field(f.name) ?? ""])));
      if (!parsed.success) throw badRequest(issuesOf(parsed.error));
      return run(call, orderId, parsed.data);
    },
  };
}

const NOTHING_CAPTURED = ["unpaid", "pending", "authorized"];

export const PAYMENT_ACTIONS: readonly OrderAction[] = [
  orderAction({
    name: "mark_paid",
    label: "Mark as paid",
    intro: "The money arrived outside the gateway (a bank transfer, cash): record it as paid.",
    permission: "orders.write",
    when: (o) => o.status === "open" && !["paid", "partially_refunded", "refunded"].includes(o.paymentStatus),
    input: z.object({}),
    run: (call, orderId) => call(setOrderStatus, { orderId, action: "mark_paid" }),
    done: (o) => `Order #${o.number} is marked as paid.`,
  }),
  orderAction({
    name: "cancel",
    label: "Cancel order",
    intro: "Cancels the order and gives its reserved stock back at once. This cannot be undone.",
    permission: "orders.cancel",
    when: (o) => o.status === "open" && [...NOTHING_CAPTURED, "refunded"].includes(o.paymentStatus) && o.fulfillmentStatus === "unfulfilled",
    fields: [{ name: "reason", label: "Reason (kept with the order)", kind: "textarea", required: true, maxlength: 500, placeholder: "e.g. the customer asked to cancel" }],
    danger: true,
    input: z.object({ reason: z.string().trim().min(1, "Say why the order is cancelled.").max(500, "Keep the reason to 500 characters or fewer.") }),
    run: (call, orderId, { reason }) => call(cancelOrderProcedure, { orderId, reason }),
    done: (o) => `Order #${o.number} is cancelled and its reserved stock released.`,
  }),
];

const ActionForm: FC<{ action: OrderAction; order: OrderDetail; csrf: string; failed: FailedPost | undefined }> = ({ action, order, csrf, failed }) => {
  const orderId = order.id;
  const mine = failed?.action === action.name ? failed : undefined;
  const issues = (mine?.error.data?.issues as readonly FieldIssue[] | undefined) ?? [];
  return (
    <form method="post" action={`/orders/${orderId}`} class="card action" data-action={action.name}>
      <input type="hidden" name="csrf" value={csrf} />
      <input type="hidden" name="action" value={action.name} />
      <p>{action.intro}</p>
      {action.fields.map((f) => {
        const id = `${action.name}-${f.name}`;
        const error = issues.find((i) => i.path === f.name)?.message;
        const common = {
          id,
          name: f.name,
          required: f.required,
          maxlength: f.maxlength,
          placeholder: f.placeholder,
          "aria-invalid": error ? ("true" as const) : undefined,
          "aria-describedby": error ? `${id}-error` : undefined,
        };
        const typed = mine?.field(f.name) ?? "";
        return (
          <>
            <label for={id}>{f.label}</label>
            {f.kind === "textarea" ? (
              <textarea {...common} rows={2}>
                {typed}
              </textarea>
            ) : f.kind === "select" ? (
              <select id={id} name={f.name} required={f.required} aria-invalid={common["aria-invalid"]} aria-describedby={common["aria-describedby"]}>
                {(f.options?.(order) ?? []).map((o) => (
                  <option value={o.value} selected={typed === o.value}>
                    {o.label}
                  </option>
                ))}
              </select>
            ) : (
              <input {...common} value={typed} />
            )}
            <FieldError id={`${id}-error`} error={error} />
          </>
        );
      })}
      <button type="submit" class={action.danger ? "danger" : undefined}>
        {action.label}
      </button>
    </form>
  );
};

/** The order's actions for this member, or a sentence saying why there are none. */
export const OrderActions: FC<{ order: OrderDetail; offered: readonly OrderAction[]; csrf: string; failed: FailedPost | undefined }> = ({
  order,
  offered,
  csrf,
  failed,
}) => {
  return (
    <Section id="actions" title="Actions">
      {offered.length === 0 ? (
        <p class="muted">{order.status === "open" ? "Nothing to do on this order now." : `Nothing to do: the order is ${order.status}.`}</p>
      ) : (
        <div class="grid">
          {offered.map((a) => (
            <ActionForm action={a} order={order} csrf={csrf} failed={failed} />
          ))}
        </div>
      )}
    </Section>
  );
};
