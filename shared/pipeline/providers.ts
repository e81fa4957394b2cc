import { appWebhookConfigFromEnv, type AppWebhookConfig } from "../apps/secrets";
import type { Challenge } from "../challenge/challenge";
import { challengeConfigFromEnv, challengeFor } from "../challenge/select";
import type { Database } from "../db/database";
import type { DnsResolver } from "../domains/dns";
import type { DomainRouter } from "../domains/router";
import { dnsConfigFromEnv, dnsResolverFor, domainRouterFor, routerConfigFromEnv, type DnsConfig } from "../domains/select";
import { emailLinkSecretFromEnv } from "../mail/links";
import { mailerFor, mailSettingsFromEnv, type MailConfig } from "../mail/select";
import type { PaymentGateway } from "../payments/gateway";
import { gatewayConfigFromEnv, storeGateway, type GatewayConfig, type StoreGateway } from "../payments/select";
import type { Courier } from "../shipping/courier";
import { ucpSigningFromEnv, type UcpSigningConfig } from "../ucp/store-keys";
import { courierConfigFromEnv, storeCourier, type CourierConfig, type StoreCourier } from "../shipping/select";

/** What a procedure or a job may call outside (procedures/define.ts `Services`): a store's gateway and courier, the app webhooks' and UCP keys' roots. */
export interface ProviderServices {
  /** The store's payment gateway (refunds go back through it). */
  gateway(storeId: string): Promise<PaymentGateway>;
  /** The store's courier (booking a shipment). */
  courier(storeId: string): Promise<Courier>;
  /** App webhooks' root secret and URL policy. */
  appWebhooks(): AppWebhookConfig;
  /** The root the stores' UCP signing keys are sealed under (UCP_SIGNING_ROOT_SECRET). */
  ucpSigning(): UcpSigningConfig;
}

/**
 * Every outside service a Worker calls, from its configuration (wrangler vars and `wrangler secret put`).
 * Each method answers from what was read when the services were built, or throws the error that reading
 * met (the message names the variable), every time it is called.
 */
export interface Providers extends ProviderServices {
  /** Which payment gateway the deployment uses (the webhook route answers only for it). */
  gatewayConfig(): GatewayConfig;
  /** One store's gateway and the secrets its webhook and confirmation routes check with. */
  storeGateway(storeId: string): Promise<StoreGateway>;
  /** Which courier the deployment uses (its webhook segments, the local tracking page). */
  courierConfig(): CourierConfig;
  /** One store's courier and the secret its webhook route checks with. */
  storeCourier(storeId: string): Promise<StoreCourier>;
  /** The person check (decision 0019). */
  challenge(): Challenge;
  /** Which DNS the domains are verified against. */
  dnsConfig(): DnsConfig;
  dns(): DnsResolver;
  /** The custom-hostname router. */
  router(): DomainRouter;
  /** The mailer (the local one keeps its mailbox in `db`). */
  mail(db: Database): MailConfig;
  /** The key behind the links in emails (mail/links.ts). */
  emailLinkSecret(): string;
}

/**
 * A configuration read now, once: later calls answer its value, or throw the error the reading met (the
 * same error each time), so one provider's wrong variable fails only that provider's uses.
 */
function settled<T>(read: () => T): () => T {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: read() };
  } catch (error) {
    outcome = { ok: false, error };
  }
  return () => {
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };
}

/** Builds the services of one env; every provider's configuration parser is called here and nowhere else. */
function build(env: object): Providers {
  // An env is the Worker's bindings and variables by name; each parser checks the variables it reads.
  const vars = env as Readonly<Record<string, unknown>>;
  const gatewayConfig = settled(() => gatewayConfigFromEnv(vars));
  const courierConfig = settled(() => courierConfigFromEnv(vars));
  const dnsConfig = settled(() => dnsConfigFromEnv(vars));
  const mailSettings = settled(() => mailSettingsFromEnv(vars));
  const providers: Providers = {
    gatewayConfig,
    storeGateway: async (storeId) => storeGateway(gatewayConfig(), storeId),
    gateway: async (storeId) => (await storeGateway(gatewayConfig(), storeId)).gateway,
    courierConfig,
    storeCourier: async (storeId) => storeCourier(courierConfig(), storeId),
    courier: async (storeId) => (await storeCourier(courierConfig(), storeId)).courier,
    appWebhooks: settled(() => appWebhookConfigFromEnv(vars)),
    ucpSigning: settled(() => ucpSigningFromEnv(vars)),
    challenge: settled(() => challengeFor(challengeConfigFromEnv(vars))),
    dnsConfig,
    dns: settled(() => dnsResolverFor(dnsConfig(), env)),
    router: settled(() => domainRouterFor(routerConfigFromEnv(vars), env)),
    mail: (db) => mailerFor(mailSettings(), db),
    emailLinkSecret: settled(() => emailLinkSecretFromEnv(vars)),
  };
  return Object.freeze(providers);
}

// Isolate cache: an env object is fixed for its isolate's life, so its services are built once, when the
// Worker's app (shared/http/app.ts) or job runner (shared/jobs/run.ts) first validates it.
const built = new WeakMap<object, Providers>();

/**
 * The Worker's provider services, built once per env. Every configuration is read when they are built (at
 * start-up: the first request or job), and each provider's error is kept for its own uses, so a route that
 * calls no courier is not refused for COURIER, while every checkout fails at once on a wrong CHALLENGE.
 */
export function providersOf(env: object): Providers {
  let providers = built.get(env);
  if (!providers) {
    providers = build(env);
    built.set(env, providers);
  }
  return providers;
}

/** What a procedure may call of a Worker's provider services (procedures/define.ts `Services`). */
export function procedureServices({ gateway, courier, appWebhooks, ucpSigning }: ProviderServices): ProviderServices {
  return { gateway, courier, appWebhooks, ucpSigning };
}

/** The procedures' and jobs' share of the provider services of `env`. */
export const providerServices = (env: object): ProviderServices => procedureServices(providersOf(env));
