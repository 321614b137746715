import type { WireUser } from "../auth";
import type { ErrorCode } from "../errors";

/**
 * What crosses the service binding (contract platform.md §1, docs/workers.md): the answers of `AuthService` and
 * `AuthAdmin`, as plain structured-clonable values. `@edge-auth/hono` types its calls with these.
 */

/** Which face issued a token: Nhost's API (`AUTH_SERVER_URL`) or the Supabase face (`/supabase/auth/v1`). */
export type Face = "nhost" | "supabase";

/**
 * An error as a value: Workers RPC keeps only a thrown error's message and standard name, so a consumer could not
 * tell a refused argument from an outage. `code` is the error catalogue's (src/errors.ts).
 */
export interface BindingError {
  ok: false;
  error: { code: ErrorCode; message: string };
}

export interface AuthenticateOptions {
  /** Also take the service's browser session cookie (its hosted pages' sign-in); an unsafe method must be same-site. */
  cookie?: boolean;
  /** Also ask whether the session still stands (signed out, revoked, replayed, user disabled: null). */
  live?: boolean;
}

/** How the request proved who it is. */
export type Credential = "access-token" | "pat" | "cookie";

export interface Authenticated {
  /** What the credential says of the user (`getUser` reads the whole profile). */
  user: { id: string; roles: string[]; defaultRole: string };
  /** The session the credential belongs to (`live`: it was found standing); null for a personal access token. */
  session: { id: string; live: boolean } | null;
  /** The access token's verified claims; null for a personal access token or the cookie. */
  claims: Record<string, unknown> | null;
  /** The organization the session acts in (contract organizations.md §1). */
  org?: { id: string };
  face: Face;
  credential: Credential;
}

export interface VerifyTokenOptions {
  /** The token's `aud` must name it (the Supabase face's tokens say `authenticated`; Nhost's carry none). */
  audience?: string;
  live?: boolean;
}

export type TokenVerdict =
  | {
      active: true;
      claims: Record<string, unknown>;
      userId: string;
      sessionId?: string;
      orgId?: string;
      face: Face;
    }
  | { active: false; reason: string };

/**
 * A user's profile: the Nhost User resource (`GET /user`'s: id, email, display name, avatar, locale, roles, default
 * role, metadata, the verified flags…) and whether the user is disabled; no secrets (hashes, TOTP seeds), no sessions.
 */
export type UserProfile = WireUser & { disabled: boolean };
