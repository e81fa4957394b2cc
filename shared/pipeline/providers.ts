import { appWebhookConfigFromEnv } from "../apps/secrets";
import type { Services } from "../procedures/define";
import { gatewayConfigFromEnv, storeGateway } from "../payments/select";
import { courierConfigFromEnv, storeCourier } from "../shipping/select";

export type ProviderServices = Required<Pick<Services, "gateway" | "courier" | "appWebhooks">>;

/**
 * The outside services a procedure or a job may call (the store's payment gateway, its courier, the app
 * webhooks' signing root), from the Worker's configuration. Read when asked, so a misconfigured provider
 * fails that call with its message, not every request.
 */
export function providerServices(env: object): ProviderServices {
  const vars = env as Record<string, unknown>;
  return {
    gateway: async (storeId) => (await storeGateway(gatewayConfigFromEnv(vars), storeId)).gateway,
    courier: async (storeId) => (await storeCourier(courierConfigFromEnv(vars), storeId)).courier,
    appWebhooks: () => appWebhookConfigFromEnv(vars),
  };
}
