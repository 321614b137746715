import {
  type Decision,
  type EvaluationsSemantic,
  evaluate,
  evaluateMany,
  type PermissionDeps,
  SEMANTICS,
} from "./evaluate";
import { MAX_EVALUATIONS, PermissionRequestError } from "./request";

/**
 * The service binding's `check` and `checkMany` (contract platform.md §1–2): AuthZEN evaluations from another Worker,
 * the same core as the HTTP API's. What a consumer sends is untrusted like a PEP's body: every evaluation is checked
 * (request.ts), and a refusal is a PermissionRequestError, which the binding answers as a value.
 */
export function check(deps: PermissionDeps, request: unknown): Promise<Decision> {
  return evaluate(deps, request);
}

export interface CheckManyOptions {
  /** AuthZEN's `evaluations_semantic`; `execute_all` when absent. */
  semantic?: EvaluationsSemantic;
}

export function checkMany(
  deps: PermissionDeps,
  requests: unknown,
  options: CheckManyOptions = {},
): Promise<Decision[]> {
  if (!Array.isArray(requests)) throw new PermissionRequestError("requests must be an array of evaluations");
  if (requests.length > MAX_EVALUATIONS) {
    throw new PermissionRequestError(`at most ${MAX_EVALUATIONS} evaluations in one call`);
  }
  const semantic = options?.semantic ?? "execute_all";
  if (!SEMANTICS.includes(semantic)) {
    throw new PermissionRequestError(`semantic must be one of ${SEMANTICS.join(", ")}`);
  }
  return evaluateMany(deps, requests, semantic);
}
