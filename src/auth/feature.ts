import type { Config } from "../config";
import * as tables from "../db/tables/auth";
import type { Deps } from "../http/deps";
import { coreAuthRoutes } from "./core-routes";
import { liftEndedBans, sweepAuth } from "./housekeeping";
import { authSettings } from "./settings";

/** The core: accounts, sessions, links, MFA, WebAuthn, devices, the lockout (src/runtime/feature.ts says each part). */
export const authFeature = {
  name: "auth",
  settings: authSettings,
  tables,
  routes: (config: Config) => ({ auth: coreAuthRoutes(config) }),
  housekeeping: (services: Deps, now: number) => sweepAuth(services, now),
  everyMinute: (services: Deps, now: number) => liftEndedBans(services, now),
};
