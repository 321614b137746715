// The service's surface as a consumer sees it: what `AuthService` answers across a service binding (contract
// platform.md §1) and what the AuthZEN API takes and answers (§2). Declarations only, no code: the package types its
// middleware with them, and the same names describe the binding off Cloudflare, where the package answers them itself
// from a JWKS and the AuthZEN endpoint.

/** Which of the service's faces issued a token: Nhost's API or Supabase's (src/faces/supabase/). */
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
  /** Also ask whether the session is still alive (signed out, revoked, replayed, user disabled: null). */
  live?: boolean;
  /** Read the service's browser cookie too (an unsafe method then needs a same-site Origin). */
  cookie?: boolean;
}

/** How the request proved who it is. */
export type Credential = "access-token" | "pat" | "cookie";

/** Who sent a request, as `authenticate` answers it. */
export interface Authenticated {
  user: { id: string; roles: string[]; defaultRole: string };
  session: { id: string; live: boolean } | null;
  claims: Record<string, unknown> | null;
  org?: { id: string };
  face: Face;
  credential: Credential;
}

export interface VerifyTokenOptions {
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

/** The `AuthService` entrypoint, as its RPC stub is called: every answer is a value, never a throw. */
export interface AuthServiceBinding {
  authenticate(request: Request, opts?: AuthenticateOptions): Promise<Authenticated | null | Failure>;
  verifyToken(token: string, opts?: VerifyTokenOptions): Promise<TokenVerdict | Failure>;
  getUser(id: string): Promise<Record<string, unknown> | null | Failure>;
  check(request: EvaluationRequest): Promise<Decision | Failure>;
  checkMany(requests: EvaluationRequest[]): Promise<Decision[] | Failure>;
}
