/** Helpers for the gateway tests (they hold no logic of the adapters). */
import { isGatewayError, type CreatePaymentInput, type GatewayError } from "#shared/payments/gateway";

export const ORDER_ID = "0b5c2f9e-1111-4222-8333-444455556666";

/** A createPayment input for attempt `attempt` of ORDER_ID, 1234.50 INR. */
export function createInput(attempt = 1, overrides: Partial<CreatePaymentInput> = {}): CreatePaymentInput {
  const orderId = overrides.orderId ?? ORDER_ID;
  return {
    orderId,
    orderNumber: "1001",
    attempt,
    idempotencyKey: `${orderId}:${attempt}`,
    amount: 123_450,
    currency: "INR",
    customer: { email: "asha@example.test" },
    returnUrl: `http://demo.localhost:8788/api/checkout/${orderId}/confirm`,
    ...overrides,
  };
}

/** The GatewayError a call rejects with; anything else (a success, a raw error) fails the test. */
export async function gatewayFailure(promise: Promise<unknown>): Promise<GatewayError> {
  const e = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isGatewayError(e)) throw new Error(`expected a GatewayError, got ${String(e)}`);
  return e;
}
