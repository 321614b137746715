import {
  auditQuery,
  createUser,
  createUserBody,
  deleteUser,
  listAuditEvents,
  patchUser,
  requireUser,
  userPatchBody,
} from "../admin";
import { revokeAllSessions } from "../auth";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { deleteRelationship, relationshipSchema, writeRelationship } from "../permissions";
import { parsed } from "./arguments";

/**
 * `AuthAdmin` (contract platform.md §1, docs/workers.md): the admin API's own functions (src/admin/), on the same
 * inputs, each audited as `admin.<action>` the way the HTTP API audits it, with the calling Worker's name in place of
 * the path. The name is the binding's `props.caller`, which the calling Worker's configuration declares: the platform
 * vouches for no caller identity, so it is a label an operator chose, not a proof (the docs say so).
 */
export interface AdminCall {
  deps: Deps;
  caller: string;
}

const MAX_CALLER_LENGTH = 100;
/**
 * A control character (C0, DEL, C1) or a line or paragraph separator: a name with one could forge a line in a log read
 * as text, or hide what it says in the console. A Worker's name never has one.
 */
const UNPRINTABLE = /[\p{Cc}\u2028\u2029]/u;

/** The call, once the switch is on and the binding names its caller; the refusal otherwise. */
export function adminCall(deps: Deps, props: unknown): AdminCall {
  if (!deps.config.platform.adminBindingEnabled) {
    throw new AppError(
      "disabled-endpoint",
      "AuthAdmin answers only where AUTH_ADMIN_BINDING_ENABLED=true (docs/workers.md)",
    );
  }
  const caller = (props as { caller?: unknown } | undefined)?.caller;
  if (
    typeof caller !== "string" ||
    caller.length === 0 ||
    caller.length > MAX_CALLER_LENGTH ||
    UNPRINTABLE.test(caller)
  ) {
    throw new AppError(
      "invalid-request",
      `AuthAdmin needs the binding's props.caller: the calling Worker's name for the audit log (1 to ${MAX_CALLER_LENGTH} printable characters)`,
    );
  }
  // Every event of the call names the Worker as its actor (src/audit/actor.ts).
  deps.audit.actAs({ kind: "worker", name: caller });
  return { deps, caller };
}

function audited(
  call: AdminCall,
  action: string,
  userId: string | null,
  detail: Record<string, unknown> = {},
) {
  call.deps.audit({
    type: `admin.${action}`,
    userId,
    detail: { ...detail, caller: call.caller, via: "service-binding" },
  });
}

/** A user id as an argument: a string of at most 100 characters (every id the service makes is a UUID). */
function userIdOf(value: unknown): string {
  if (typeof value !== "string" || value.length === 0 || value.length > 100) {
    throw new AppError("invalid-request", "the user id is a string of at most 100 characters");
  }
  return value;
}

/** `POST /admin/users`. */
export async function createUserAs(call: AdminCall, input: unknown) {
  const { email, password, emailVerified, ...options } = parsed(createUserBody, input, "createUser");
  const user = await createUser(call.deps, { email, password, emailVerified, options, method: "admin" });
  audited(call, "user.create", user.id, { email: user.email ?? null });
  return user;
}

/** `PATCH /admin/users/{id}`: `disabled: true` ends every session and OAuth2 grant of the user. */
export async function updateUserAs(call: AdminCall, id: unknown, patch: unknown) {
  const fields = parsed(userPatchBody, patch, "updateUser");
  const user = await patchUser(call.deps, userIdOf(id), fields);
  audited(call, fields.disabled === true ? "user.disable" : "user.update", user.id, {
    fields: Object.keys(fields),
  });
  return user;
}

/** `updateUser(id, { disabled: true })`, by its name. */
export const disableUserAs = (call: AdminCall, id: unknown) => updateUserAs(call, id, { disabled: true });

/** `DELETE /admin/users/{id}`. */
export async function deleteUserAs(call: AdminCall, id: unknown): Promise<{ deleted: string }> {
  const deleted = await deleteUser(call.deps, userIdOf(id));
  audited(call, "user.delete", deleted.id, { email: deleted.email });
  return { deleted: deleted.id };
}

/** `DELETE /admin/users/{id}/sessions`: every session of the user ends (and `live` sees it at once). */
export async function revokeSessionsAs(call: AdminCall, id: unknown): Promise<{ revoked: string }> {
  const user = await requireUser(call.deps, userIdOf(id));
  await revokeAllSessions(call.deps, user.id);
  audited(call, "sessions.revoke-all", user.id);
  return { revoked: user.id };
}

/** `GET /admin/audit`: a page of events, newest first. Reading the log is itself recorded, with who read it. */
export async function listAuditAs(call: AdminCall, query: unknown) {
  const page = await listAuditEvents(call.deps, parsed(auditQuery, query ?? {}, "listAudit"));
  audited(call, "audit.read", null);
  return page;
}

/** `POST /admin/authz/relationships`: stores a relationship (contract platform.md §2); `created` false if it was there. */
export async function writeRelationshipAs(call: AdminCall, tuple: unknown) {
  const answer = await writeRelationship(call.deps, parsed(relationshipSchema, tuple, "writeRelationship"));
  if (answer.created) audited(call, "authz.relationship.add", null, { ...answer.relationship });
  return answer;
}

/** `DELETE /admin/authz/relationships`: `not-found` when there was none. */
export async function deleteRelationshipAs(call: AdminCall, tuple: unknown): Promise<{ deleted: true }> {
  const relationship = parsed(relationshipSchema, tuple, "deleteRelationship");
  await deleteRelationship(call.deps, relationship);
  audited(call, "authz.relationship.delete", null, { ...relationship });
  return { deleted: true };
}
