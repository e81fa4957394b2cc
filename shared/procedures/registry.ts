import { analyticsProcedures } from "./analytics";
import { apiGrantProcedures } from "./api-grants";
import { appDeliveryProcedures } from "./app-deliveries";
import { appProcedures } from "./apps";
import { collectionProcedures } from "./collections";
import { contentProcedures } from "./content";
import { customersProcedures } from "./customers";
import { procedureKey, type Procedure } from "./define";
import { discountsProcedures } from "./discounts";
import { domainProcedures } from "./domains";
import { fulfilmentProcedures } from "./fulfilment";
import { inventoryProcedures } from "./inventory";
import { invoiceProcedures } from "./invoices";
import { linkProcedures } from "./links";
import { marketingProcedures } from "./marketing";
import { mediaProcedures } from "./media";
import { menuProcedures } from "./menu";
import { mcpSettingsProcedures } from "./mcp-settings";
import { notificationProcedures } from "./notifications";
import { orderProcedures } from "./orders";
import { outboxProcedures } from "./outbox";
import { overviewProcedures } from "./overview";
import { productRemovalProcedures } from "./product-removal";
import { productProcedures } from "./products";
import { restockProcedures } from "./restock";
import { salesChannelProcedures } from "./sales-channels";
import { staffProcedures } from "./staff";
import { storeProcedures } from "./store";
import { taskProcedures } from "./tasks";
import { taxIdentityProcedures } from "./tax-identity";
import { themeProcedures } from "./theme";

/**
 * The store's own procedures. The doors serve these plus the assistant's (AI approvals) through
 * shared/registry/procedures.ts; this list knows nothing of the assistant, which builds on it.
 */
export const BASE_PROCEDURES: readonly Procedure[] = [
  ...storeProcedures,
  ...domainProcedures,
  ...staffProcedures,
  ...productProcedures,
  ...productRemovalProcedures,
  ...mediaProcedures,
  ...collectionProcedures,
  ...inventoryProcedures,
  ...taxIdentityProcedures,
  ...restockProcedures,
  ...customersProcedures,
  ...marketingProcedures,
  ...orderProcedures,
  ...fulfilmentProcedures,
  ...invoiceProcedures,
  ...taskProcedures,
  ...outboxProcedures,
  ...overviewProcedures,
  ...notificationProcedures,
  ...discountsProcedures,
  ...contentProcedures,
  ...menuProcedures,
  ...linkProcedures,
  ...analyticsProcedures,
  ...apiGrantProcedures,
  ...mcpSettingsProcedures,
  ...salesChannelProcedures,
  ...themeProcedures,
  ...appProcedures,
  ...appDeliveryProcedures,
] as readonly Procedure[];

const BY_KEY = new Map(BASE_PROCEDURES.map((p) => [procedureKey(p), p]));

/** A base procedure by key (`products.update`), e.g. the one an AI approval names. */
export function findBaseProcedure(key: string): Procedure | undefined {
  return BY_KEY.get(key);
}
