import type {
  Authenticated,
  Decision,
  EvaluationRequest,
  EvaluationsSemantic,
  TokenVerdict,
  VerifyTokenOptions,
} from "./service.js";

/**
 * Who sent the request, in the shape of the binding's answer. `source: "binding"`: the service's answer, with, when
 * asked, a session known to be alive. `source: "token"`: what a verified access token says, off Cloudflare.
 */
export type Identity = Authenticated & { source: "binding" | "token" };

/** What `c.var.auth` offers, the same through the binding and off Cloudflare. Refusals and failures throw `EdgeAuthError`. */
export interface AuthClient {
  readonly mode: "binding" | "remote";
  /** Null when the request carries no credential the service accepts (or, with `live`, its session has ended). */
  authenticate(request: Request, options?: { live?: boolean }): Promise<Identity | null>;
  verifyToken(token: string, options?: VerifyTokenOptions): Promise<TokenVerdict>;
  check(request: EvaluationRequest): Promise<Decision>;
  /** In order; with a `semantic` that stops early, the answers end where it stopped. */
  checkMany(requests: EvaluationRequest[], options?: { semantic?: EvaluationsSemantic }): Promise<Decision[]>;
}
