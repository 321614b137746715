import * as tables from "../db/tables/webhooks";
import type { DeliveryMessage } from "../events/types";
import type { Deps } from "../http/deps";
import { webhookAdminRoutes } from "./admin-routes";
import { deliverWebhooks } from "./deliver";
import { markDeliveryDead } from "./deliveries";
import { webhookFanOut } from "./fan-out";

/** Webhooks (contract move-in §5.2): endpoints in the admin API, a fan-out from the event stream, the deliveries. */
export const webhooksFeature = {
  name: "webhooks",
  tables,
  routes: () => ({ admin: webhookAdminRoutes }),
  eventConsumer: ({ db, config, env, now }: Deps) =>
    webhookFanOut({ db, config, queue: env.WEBHOOK_DELIVERIES, now }),
  queues: {
    deliveries: (batch: MessageBatch<unknown>, services: Deps) =>
      deliverWebhooks(batch as MessageBatch<DeliveryMessage>, services),
  },
  // A delivery that ran out of retries is marked failed, where the console shows it.
  deadLetter: (body: unknown, { db, now }: Deps) => markDeliveryDead(db, body, now()),
};
