import { z } from "zod";
import { endImpersonation, impersonateBody, startImpersonation } from "../impersonation";
import type { AdminCall } from "./admin";
import { parsed } from "./arguments";

/**
 * `AuthAdmin.impersonateUser` and `AuthAdmin.endImpersonation` (contract operators.md §1): the admin API's, with the
 * calling Worker (`props.caller`) recorded beside the operator's own name, in the impersonation's row and in both
 * audit events.
 */

const idSchema = z.string().min(1).max(100);

/** `POST /admin/users/{id}/impersonate`. */
export async function impersonateUserAs(call: AdminCall, id: unknown, input: unknown) {
  const body = parsed(impersonateBody, input, "impersonateUser");
  const started = await startImpersonation(call.deps, {
    ...body,
    userId: parsed(idSchema, id, "the user id"),
    caller: call.caller,
  });
  return { session: started.session, url: started.url, expiresAt: new Date(started.endsAt).toISOString() };
}

/** `DELETE /admin/impersonations/{sessionId}`. */
export async function endImpersonationAs(call: AdminCall, sessionId: unknown): Promise<{ ended: string }> {
  const id = parsed(idSchema, sessionId, "the session id");
  await endImpersonation(call.deps, id, `worker:${call.caller}`);
  return { ended: id };
}
