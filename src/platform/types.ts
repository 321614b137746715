import type { Failure } from "../../packages/hono/src/service";
import type { WireUser } from "../auth";
import type { ErrorCode } from "../errors";

/**
 * What crosses the service binding (contract platform.md §1, docs/workers.md): the answers of `AuthService` and
 * `AuthAdmin`, as plain structured-clonable values. What a consumer sees is declared once, in @edge-auth/hono
 * (packages/hono/src/service.ts), which is published and must carry its declarations; here the service narrows only
 * what it alone knows.
 */
export type {
  Authenticated,
  AuthenticateOptions,
  Credential,
  Face,
  TokenVerdict,
  VerifyTokenOptions,
} from "../../packages/hono/src/service";

/**
 * An error as a value: Workers RPC keeps only a thrown error's message and standard name, so a consumer could not
 * tell a refused argument from an outage. `code` is the error catalogue's (src/errors.ts).
 */
export interface BindingError extends Failure {
  error: { code: ErrorCode; message: string };
}

/**
 * A user's profile: the Nhost User resource (`GET /user`'s: id, email, display name, avatar, locale, roles, default
 * role, metadata, the verified flags…) and whether the user is disabled; no secrets (hashes, TOTP seeds), no sessions.
 */
export type UserProfile = WireUser & { disabled: boolean };
