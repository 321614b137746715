import type { Config } from "../config";
import type { Env } from "../env";
import type { AccessTokenPayload } from "../signing-keys/jwt";
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
    /** The key of the request's DPoP proof, set by `sessionProof` on the routes that make or renew sessions. */
    sessionJkt?: string | null;
    /**
     * How the route's sign-in is recorded (src/auth/sign-in/scope.ts): a refusal of its credentials is audited under
     * it (`signin.failure`, src/runtime/app.ts). Unset on every other route.
     */
    signInMethod?: string;
    /** A rate limit's count still in flight (`rateLimitBeside`, src/rate-limits/middleware.ts), for the flow to await. */
    pendingCount?: Promise<void>;
  };
}
