import type { Config } from "../config";
import type { Env } from "../env";
import type { AccessTokenPayload } from "../lib/jwt";
import type { Deps } from "./deps";

/** Hono's type parameters for this app: the bindings and the typed context variables (`c.var.*`). */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    config: Config;
    deps: Deps;
    requestId: string;
    /** Set by `requireAuth` / `optionalAuth`. */
    auth: AccessTokenPayload | null;
  };
}
