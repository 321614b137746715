import { WorkerEntrypoint } from "cloudflare:workers";
import type { Env } from "../../env";
import type { Deps } from "../../http/deps";
import { type CheckManyOptions, check, checkMany, type Decision } from "../../permissions";
import {
  type Authenticated,
  type AuthenticateOptions,
  asValue,
  authenticate,
  authenticateArguments,
  type BindingError,
  getUserProfile,
  type TokenVerdict,
  type UserProfile,
  type VerifyTokenOptions,
  verifyToken,
  verifyTokenOptionsOf,
} from "../../platform";
import { withServices } from "./services";

/**
 * `AuthService`, for the app's own Workers (contract platform.md §1, docs/workers.md): who sent a request, whether a
 * token stands, a user's profile. Every method answers a value, a failure included (`{ ok: false, error }`).
 * Only public methods are reachable over RPC, so helpers stay module functions, never methods.
 */
export class AuthService extends WorkerEntrypoint<Env> {
  authenticate(
    request: Request,
    options?: AuthenticateOptions,
  ): Promise<Authenticated | null | BindingError> {
    return serve(this.env, this.ctx, (deps) => {
      const checked = authenticateArguments(request, options);
      return authenticate(deps, checked.request, checked.options);
    });
  }

  verifyToken(token: string, options?: VerifyTokenOptions): Promise<TokenVerdict | BindingError> {
    return serve(this.env, this.ctx, (deps) => verifyToken(deps, token, verifyTokenOptionsOf(options)));
  }

  getUser(id: string): Promise<UserProfile | null | BindingError> {
    return serve(this.env, this.ctx, (deps) => getUserProfile(deps, id));
  }

  /** May this user do this? One AuthZEN evaluation (contract platform.md §2, docs/permissions.md). */
  check(request: unknown): Promise<Decision | BindingError> {
    return serve(this.env, this.ctx, (deps) => check(deps, request));
  }

  /** Several AuthZEN evaluations, in order, with `semantic` as AuthZEN's `evaluations_semantic`. */
  checkMany(requests: unknown[], options?: CheckManyOptions): Promise<Decision[] | BindingError> {
    return serve(this.env, this.ctx, (deps) => checkMany(deps, requests, options));
  }
}

function serve<T>(env: Env, ctx: ExecutionContext, work: (deps: Deps) => Promise<T>) {
  return asValue(() => withServices(env, ctx, work));
}
