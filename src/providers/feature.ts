import * as tables from "../db/tables/providers";
import type { Deps } from "../http/deps";
import { sweepProviders } from "./housekeeping";
import { providerRoutes } from "./provider-routes";
import { providerSettings } from "./settings";

/** Sign-in with social and OAuth providers, and native ID tokens (contract §7). */
export const providersFeature = {
  name: "providers",
  settings: providerSettings,
  tables,
  routes: () => ({ auth: providerRoutes }),
  housekeeping: (services: Deps, now: number) => sweepProviders(services, now),
};
