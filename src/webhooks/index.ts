/**
 * Webhooks (contract move-in §5.2): what the rest of the service uses. The queue handler (src/runtime/consumers.ts) runs the
 * fan-out, the deliveries and the dead deliveries' end; the admin API mounts the routes; the console manages
 * endpoints and deliveries through the same services. Everything else in src/webhooks/ is internal to it.
 */
export { webhookAdminRoutes } from "./admin-routes";
export { deliverWebhooks } from "./deliver";
export { listDeliveries, markDeliveryDead, redeliver } from "./deliveries";
export {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  updateEndpoint,
} from "./endpoints";
export { webhookFanOut } from "./fan-out";
export { createEndpointSchema, type WireDelivery, type WireEndpoint } from "./wire";
