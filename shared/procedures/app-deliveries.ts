import { and, eq, ne, sql } from "drizzle-orm";
import { z } from "zod";
import { APP_REDELIVERY_KIND } from "../apps/events";
import { emit } from "../db/outbox";
import { appDelivery, storeApp } from "../db/schema";
import { AppError } from "../http/errors";
import { deliveryColumns } from "./apps";
import { storeProcedure } from "./define";

/**
 * Redelivery (issue 12): an admin sends one delivery of an app's log again. The change is a new round of
 * tries for the delivery and an outbox event in the same transaction; the relay takes it to the
 * {apps}-events consumer, which queues the round's first try (SPEC rule 5: no queue after commit).
 */

const deliveryNotFound = () => new AppError("NOT_FOUND", "Delivery not found in this store.");
const conflict = (message: string) => new AppError("CONFLICT", message, { issues: [{ path: "deliveryId", message }] });

export const redeliver = storeProcedure({
  router: "apps",
  name: "redeliver",
  description:
    "Send one delivery of an app's log again, with a fresh round of tries (failed or delivered ones; a pending one is already being tried). Answers the delivery, now pending.",
  access: "settings.write",
  mutates: true,
  input: z.strictObject({ deliveryId: z.uuid() }),
  async run({ tx }, input) {
    const [found] = await tx
      .select({ status: appDelivery.status, active: storeApp.active })
      .from(appDelivery)
      .innerJoin(storeApp, and(eq(storeApp.storeId, appDelivery.storeId), eq(storeApp.id, appDelivery.appId)))
      .where(and(eq(appDelivery.storeId, tx.storeId), eq(appDelivery.id, input.deliveryId)));
    if (!found) throw deliveryNotFound();
    if (!found.active) throw conflict("The app is disabled: enable it first.");
    const [row] = await tx
      .update(appDelivery)
      .set({
        status: "pending",
        round: sql`${appDelivery.round} + 1`,
        attempts: 0,
        claimedAt: null,
        deliveredAt: null,
        nextAttemptAt: sql`now()`,
        updatedAt: sql`now()`,
      })
      .where(and(eq(appDelivery.storeId, tx.storeId), eq(appDelivery.id, input.deliveryId), ne(appDelivery.status, "pending")))
      .returning({ ...deliveryColumns, appId: appDelivery.appId });
    if (!row) throw conflict("This delivery is still being tried; wait for it to finish or fail.");
    const { appId, ...delivery } = row;
    await emit(tx, APP_REDELIVERY_KIND, { deliveryId: delivery.id, round: delivery.round, appId });
    return delivery;
  },
});

export const appDeliveryProcedures = [redeliver];
