// The service's surface as a consumer sees it: what `AuthService` answers across a service binding (contract
// platform.md §1) and what the AuthZEN API takes and answers (§2). Declared once, here, because the published package
// must carry them: the service's src/platform/types.ts re-exports these and narrows only what it alone knows (an
// error's code is one of its catalogue; a profile is its User resource). Declarations only, no code.

/** Which face issued a token: Nhost's API (`AUTH_SERVER_URL`) or the Supabase face (`/supabase/auth/v1`). */
export type Face = "nhost" | "supabase";

/** An error crossing the binding as a value (Workers RPC keeps only an error's message and name). */
export interface ServiceError {
  /** A code of the service's error catalogue (`unauthorized`, `invalid-request`, `service-unavailable`, …). */
  code: string;
  message: string;
}

/** What every method answers instead of throwing when it cannot answer. */
export interface Failure {
  ok: false;
  error: ServiceError;
}

export interface AuthenticateOptions {
  /** Also take the service's browser session cookie (its hosted pages' sign-in); an unsafe method must be same-site. */
  cookie?: boolean;
  /** Also ask whether the session still stands (signed out, revoked, replayed, user disabled: null). */
  live?: boolean;
}

/** How the request proved who it is. */
export type Credential = "access-token" | "pat" | "cookie";

/** Who sent a request, as `authenticate` answers it. */
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
  /**
   * Who acts, when the session is an impersonation (the token's `act.sub`, RFC 8693 §4.1): support acting as the
   * user. Absent for the user's own session. A consumer may refuse what it will not let an impersonator do.
   */
  actor?: string;
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

/** AuthZEN 1.0 §5: who asks to do what to which thing, in which context. */
export interface Subject {
  type: string;
  id: string;
  properties?: Record<string, unknown>;
}
export interface Resource {
  type: string;
  id: string;
  properties?: Record<string, unknown>;
}
export interface Action {
  name: string;
  properties?: Record<string, unknown>;
}
export interface EvaluationRequest {
  subject: Subject;
  action: Action;
  resource: Resource;
  context?: Record<string, unknown>;
}

/** AuthZEN 1.0 §6.2: the decision, and why when the PDP says. */
export interface Decision {
  decision: boolean;
  context?: Record<string, unknown>;
  reasons?: unknown;
}

/** AuthZEN's `evaluations_semantic`: answer each, stop at the first deny, or stop at the first permit. */
export type EvaluationsSemantic = "execute_all" | "deny_on_first_deny" | "permit_on_first_permit";

/** The `AuthService` entrypoint, as its RPC stub is called: every answer is a value, never a throw. */
export interface AuthServiceBinding {
  authenticate(request: Request, opts?: AuthenticateOptions): Promise<Authenticated | null | Failure>;
  verifyToken(token: string, opts?: VerifyTokenOptions): Promise<TokenVerdict | Failure>;
  getUser(id: string): Promise<Record<string, unknown> | null | Failure>;
  check(request: EvaluationRequest): Promise<Decision | Failure>;
  checkMany(
    requests: EvaluationRequest[],
    options?: { semantic?: EvaluationsSemantic },
  ): Promise<Decision[] | Failure>;
}
