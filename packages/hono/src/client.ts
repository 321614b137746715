import type {
  Authenticated,
  Decision,
  EvaluationRequest,
  Face,
  TokenVerdict,
  VerifyTokenOptions,
} from "./service";

/** The user as a token alone tells of them (off Cloudflare, where no profile comes with the answer). */
export interface TokenUser {
  id: string;
  email?: string;
  roles: string[];
  defaultRole?: string;
}

/**
 * Who sent the request. `source: "binding"`: the service's answer over the binding, with the user's profile and, when
 * asked, a session known to be alive. `source: "token"`: what a verified access token says, off Cloudflare.
 */
export type Identity =
  | (Authenticated & { source: "binding" })
  | {
      source: "token";
      user: TokenUser;
      session: { id: string | null };
      claims: Record<string, unknown>;
      org?: { id: string };
      face: Face;
    };

/** What `c.var.auth` offers, the same through the binding and off Cloudflare. Refusals and failures throw `EdgeAuthError`. */
export interface AuthClient {
  readonly mode: "binding" | "remote";
  /** Null when the request carries no credential the service accepts (or, with `live`, its session has ended). */
  authenticate(request: Request, options?: { live?: boolean }): Promise<Identity | null>;
  verifyToken(token: string, options?: VerifyTokenOptions): Promise<TokenVerdict>;
  check(request: EvaluationRequest): Promise<Decision>;
  checkMany(requests: EvaluationRequest[]): Promise<Decision[]>;
}
