import type { Config } from "../config";
import * as tables from "../db/tables/auth";
import type { Deps } from "../http/deps";
import { coreAuthRoutes, webauthnWellKnownRoutes } from "./core-routes";
import { liftEndedBans, sweepAuth } from "./housekeeping";
import { authSettings } from "./settings";

/** The core: accounts, sessions, links, MFA, WebAuthn, devices, the lockout (src/runtime/feature.ts says each part). */
export const authFeature = {
  name: "auth",
  settings: authSettings,
  tables,
  // `/.well-known/webauthn` (WebAuthn L3 §5.11) at the origin root, where browsers look for it.
  routes: (config: Config) => ({ auth: coreAuthRoutes(config), root: webauthnWellKnownRoutes }),
  housekeeping: (services: Deps, now: number) => sweepAuth(services, now),
  everyMinute: (services: Deps, now: number) => liftEndedBans(services, now),
};
