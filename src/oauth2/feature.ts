import type { Config } from "../config";
import * as tables from "../db/tables/oauth2";
import { retryDelaySeconds } from "../events/retry";
import type { Deps } from "../http/deps";
import { useKeyStore } from "../signing-keys/stored-keys";
import { deliverPings, isPingMessage } from "./ciba";
import { oauth2ClientAdminRoutes } from "./clients";
import { sweepOAuth2 } from "./housekeeping";
import { backchannelLogoutFanOut, deliverLogoutTokens } from "./logout";
import { oauth2Routes, rootMetadataRoutes } from "./oauth2-routes";
import { oauth2Settings } from "./settings";

/**
 * The OAuth2 / OpenID Connect authorization server: its endpoints (its built-in pages are src/pages/), its discovery
 * documents at the host's root (RFC 8414), the admin API's clients, back-channel logout from the event stream.
 */
export const oauth2Feature = {
  name: "oauth2",
  settings: oauth2Settings,
  tables,
  routes: (config: Config) => ({
    root: rootMetadataRoutes(config),
    auth: oauth2Routes(),
    admin: oauth2ClientAdminRoutes,
  }),
  // The OAuth2 clients to tell of an ended session; only where the logout queue is bound.
  eventConsumer: ({ shards, env }: Deps) =>
    env.LOGOUT_DELIVERIES ? backchannelLogoutFanOut({ shards, queue: env.LOGOUT_DELIVERIES }) : null,
  queues: {
    // The server's deliveries to clients: logout tokens, and CIBA pings (ciba/ping.ts).
    logoutDeliveries: async (batch: MessageBatch<unknown>, services: Deps) => {
      // Logout tokens are signed like ID tokens, with the key set the fetch handler uses (src/runtime/app.ts).
      useKeyStore(services.config, services.env.DB);
      const pings = batch.messages.filter((message) => isPingMessage(message.body));
      const logouts = batch.messages.filter((message) => !isPingMessage(message.body));
      const delay = (attempts: number) =>
        retryDelaySeconds(attempts, services.config.events.retryDelaySeconds);
      await Promise.all([
        deliverPings(pings, services, delay),
        logouts.length > 0 ? deliverLogoutTokens({ ...batch, messages: logouts }, services) : undefined,
      ]);
    },
  },
  housekeeping: (services: Deps, now: number) => sweepOAuth2(services, now),
};
