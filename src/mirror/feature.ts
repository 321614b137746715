import type { Deps } from "../http/deps";
import { mirrorConsumer } from "./index";
import { mirrorAdminRoutes } from "./resync-routes";

/** The Postgres mirror (contract move-in §5.1): a consumer of the event stream, and its resync in the admin API. */
export const mirrorFeature = {
  name: "mirror",
  routes: () => ({ admin: mirrorAdminRoutes }),
  eventConsumer: ({ env, config }: Deps) => mirrorConsumer(env, config),
};
