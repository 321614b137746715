import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import { SIGN_IN_FAILURES } from "../audit/events";
import { AppError, concealIfConfigured, platformFault } from "../errors";
import type { AppEnv } from "./app-env";
import { logError } from "./context";

/**
 * What every face does with a refusal before it words it in its own shape (the Nhost API's in src/runtime/app.ts, the
 * Supabase face's in src/faces/supabase/app.ts): the error as the catalog's (a binding's transient failure is a 503,
 * never a 500), concealed where `AUTH_CONCEAL_ERRORS` says so, a failed sign-in audited under its flow's method, and
 * logged. One place, so a second face audits and conceals exactly as the first.
 */
export async function settleRefusal(c: Context<AppEnv>, caught: unknown): Promise<AppError> {
  const error = concealIfConfigured(toAppError(caught), c.var.config.concealErrors);
  if (SIGN_IN_FAILURES.has(error.code)) await auditSignInFailure(c, error.code);
  // 5xx are faults; a 4xx with a reason is a security event worth a warning (a replayed refresh token).
  if (error.status >= 500) logError(c.var.requestId, error.code, error.reason ?? caught);
  else if (error.reason) logError(c.var.requestId, error.code, error.reason, "warn");
  return error;
}

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof HTTPException && error.status < 500) {
    // Hono's own 4xx (malformed JSON from the validator).
    return new AppError("invalid-request", error.message || "malformed request");
  }
  // A binding that failed for now (D1, a Durable Object, KV, R2): 503 with Retry-After, never a 500 (contract §1).
  const fault = platformFault(error);
  if (fault) return fault;
  const reason = error instanceof Error ? error.message : String(error);
  // Locally this means plain `wrangler dev` on a fresh checkout: say what to run instead of a bare 500.
  if (/no such table/i.test(reason)) {
    return new AppError(
      "internal-server-error",
      "the database has no tables: apply the migrations (`npm start` does, or `npx wrangler d1 migrations apply DB --local`)",
      reason,
    );
  }
  return new AppError("internal-server-error", undefined, reason);
}

/**
 * A sign-in attempt whose credentials did not work (contract §10 audit `signin.failure`), with the method and the
 * email it named, if any: what an operator needs to see credential stuffing. Recorded here, where every flow's
 * refusal ends up, rather than in each flow; the method is the one the route named for its sign-in
 * (src/auth/sign-in/scope.ts), none on a sign-up or on a route that signs nobody in.
 */
async function auditSignInFailure(c: Context<AppEnv>, code: string): Promise<void> {
  const method = c.var.signInMethod;
  const deps = c.var.deps;
  if (!method || !deps) return;
  let email: unknown;
  try {
    email = ((await c.req.json()) as Record<string, unknown>).email;
  } catch {}
  deps.audit.signInFailure({
    method,
    error: code,
    userId: c.var.auth?.sub ?? null,
    ...(typeof email === "string" ? { email } : {}),
  });
}
