import { and, eq, ne, sql } from "drizzle-orm";
import { z } from "zod";
import { APP_REDELIVERY_KIND } from "../apps/events";
import { emitStep, ensure } from "../db/changes";
import { plan } from "../db/plan";
import { appDelivery, storeApp } from "../db/schema";
import { AppError } from "../core/errors";
import { deliveryColumns, deliveryOutput } from "./apps";
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
  output: deliveryOutput,
  input: z.strictObject({ deliveryId: z.uuid() }),
  write: {
    apply(q, { store }, input) {
      const delivery = and(eq(appDelivery.storeId, store), eq(appDelivery.id, input.deliveryId));
      const appActive = sql`(select ${storeApp.active} from ${storeApp} where ${storeApp.storeId} = ${store}
        and ${storeApp.id} = (select ${appDelivery.appId} from ${appDelivery} where ${delivery}))`;
      return plan(
        [
          ensure(q, sql`exists (select 1 from ${appDelivery} where ${delivery} for update)`, deliveryNotFound()),
          ensure(q, appActive, conflict("The app is disabled: enable it first.")),
          ensure(q, sql`exists (select 1 from ${appDelivery} where ${delivery} and ${ne(appDelivery.status, "pending")})`, conflict("This delivery is still being tried; wait for it to finish or fail.")),
          q
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
            .where(delivery)
            .returning(deliveryColumns),
          emitStep(
            q,
            APP_REDELIVERY_KIND,
            sql`(select jsonb_build_object('deliveryId', ${appDelivery.id}, 'round', ${appDelivery.round}, 'appId', ${appDelivery.appId}) from ${appDelivery} where ${delivery})`,
          ),
        ] as const,
        ([, , , [row]]) => row!,
      );
    },
  },
});

export const appDeliveryProcedures = [redeliver];
