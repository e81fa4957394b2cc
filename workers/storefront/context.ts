import type { HonoEnv } from "#shared/http/app";
import type { Providers } from "#shared/pipeline/providers";
import type { StoreFacts } from "#shared/storefront/hosts";
import type { StorefrontBindings } from "./env";

/** The provider services the storefront calls: the store's payment gateway and the person check. */
export type StorefrontProviders = Pick<Providers, "gatewayConfig" | "storeGateway" | "challenge">;

/** The storefront's per-request variables: the store of the request's hostname (SPEC rule 1) and its held facts. */
export type StorefrontEnv = HonoEnv<StorefrontBindings, { storeId: string; hostname: string; store: StoreFacts }, StorefrontProviders>;
