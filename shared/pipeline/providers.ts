import { appWebhookConfigFromEnv } from "../apps/secrets";
import type { Services } from "../procedures/define";
import { gatewayConfigFromEnv, storeGateway } from "../payments/select";
import { courierConfigFromEnv, storeCourier } from "../shipping/select";

/**
 * The outside services a procedure may call (the store's payment gateway for refunds, its courier for
 * shipments, the app webhooks' signing root), from the Worker's configuration. Read when a procedure asks,
 * so a misconfigured provider fails that call with its message, not every request.
 */
export function providerServices(env: object): Pick<Services, "gateway" | "courier" | "appWebhooks"> {
  const vars = env as Record<string, unknown>;
  return {
    gateway: async (storeId) => (await storeGateway(gatewayConfigFromEnv(vars), storeId)).gateway,
    courier: async (storeId) => (await storeCourier(courierConfigFromEnv(vars), storeId)).courier,
    appWebhooks: () => appWebhookConfigFromEnv(vars),
  };
}
