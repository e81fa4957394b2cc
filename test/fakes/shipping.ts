/** Helpers for the courier tests (they hold no logic of the adapters). */
import { isCourierError, type CourierError, type CreateShipmentInput } from "#shared/shipping/courier";

export const SHIPMENT_ID = "7d1e3c55-2222-4333-8444-555566667777";
export const STORE_ID = "5f0e4c1a-aaaa-4bbb-8ccc-000000000001";
export const OTHER_STORE_ID = "5f0e4c1a-aaaa-4bbb-8ccc-000000000002";

/** A createShipment input: two items for Pune from the Mumbai Warehouse, prepaid, ₹1,233.50 after a ₹100 discount. */
export function shipmentInput(overrides: Partial<CreateShipmentInput> = {}): CreateShipmentInput {
  return {
    shipmentId: SHIPMENT_ID,
    orderId: "0b5c2f9e-1111-4222-8333-444455556666",
    orderNumber: "1002",
    pickup: { locationId: "9a0c0d6e-0000-4000-8000-000000000001", name: "Mumbai Warehouse", state: "IN-MH" },
    shipTo: {
      name: "Asha Rao",
      line1: "12 MG Road",
      city: "Pune",
      state: "IN-MH",
      postalCode: "411001",
      country: "IN",
      phone: "+91 98000 00001",
      email: "asha@example.test",
    },
    items: [
      { name: "Handloom saree", sku: "SAREE-RED", quantity: 1, unitPrice: 99_950 },
      { name: "Cotton stole", sku: "STOLE-1", quantity: 2, unitPrice: 16_700 },
    ],
    value: 123_350,
    currency: "INR",
    paymentMode: "prepaid",
    weightGrams: 850,
    ...overrides,
  };
}

/** The CourierError a call rejects with; anything else (a success, a raw error) fails the test. */
export async function courierFailure(promise: Promise<unknown>): Promise<CourierError> {
  const e = await promise.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isCourierError(e)) throw new Error(`expected a CourierError, got ${String(e)}`);
  return e;
}
