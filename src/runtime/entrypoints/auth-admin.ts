import { WorkerEntrypoint } from "cloudflare:workers";
import type { Env } from "../../env";
import {
  type AdminCall,
  adminCall,
  asValue,
  createUserAs,
  deleteRelationshipAs,
  deleteUserAs,
  disableUserAs,
  endImpersonationAs,
  impersonateUserAs,
  listAuditAs,
  revokeSessionsAs,
  updateUserAs,
  writeRelationshipAs,
} from "../../platform";
import { withServices } from "./services";

/** What the binding declares of its caller (`props` in the calling Worker's `[[services]]`): a name for the audit. */
interface AdminProps {
  caller?: string;
}

/**
 * `AuthAdmin`, for the operator's own Workers (contract platform.md §1, docs/workers.md): users and sessions as the
 * admin API has them, each call audited with the binding's `props.caller`. Closed (every method answers
 * `disabled-endpoint` as a value) unless `AUTH_ADMIN_BINDING_ENABLED=true`. Only public methods are reachable over
 * RPC, so helpers stay module functions, never methods.
 */
export class AuthAdmin extends WorkerEntrypoint<Env, AdminProps> {
  createUser(input: unknown) {
    return admin(this.env, this.ctx, (call) => createUserAs(call, input));
  }

  updateUser(id: string, patch: unknown) {
    return admin(this.env, this.ctx, (call) => updateUserAs(call, id, patch));
  }

  disableUser(id: string) {
    return admin(this.env, this.ctx, (call) => disableUserAs(call, id));
  }

  deleteUser(id: string) {
    return admin(this.env, this.ctx, (call) => deleteUserAs(call, id));
  }

  revokeSessions(userId: string) {
    return admin(this.env, this.ctx, (call) => revokeSessionsAs(call, userId));
  }

  /** A session as the user whose tokens say who acts (contract operators.md §1): `{session, url, expiresAt}`. */
  impersonateUser(id: string, input: unknown) {
    return admin(this.env, this.ctx, (call) => impersonateUserAs(call, id, input));
  }

  /** Ends an impersonation early, by its session's id. */
  endImpersonation(sessionId: string) {
    return admin(this.env, this.ctx, (call) => endImpersonationAs(call, sessionId));
  }

  listAudit(query?: unknown) {
    return admin(this.env, this.ctx, (call) => listAuditAs(call, query));
  }

  /** Stores `{resource:{type,id}, relation, subject:{type,id}}` for permissions (docs/permissions.md). */
  writeRelationship(tuple: unknown) {
    return admin(this.env, this.ctx, (call) => writeRelationshipAs(call, tuple));
  }

  deleteRelationship(tuple: unknown) {
    return admin(this.env, this.ctx, (call) => deleteRelationshipAs(call, tuple));
  }
}

/** One admin call: the switch and the caller checked, then `work`; its events handed to the queue after it. */
function admin<T>(env: Env, ctx: ExecutionContext<AdminProps>, work: (call: AdminCall) => Promise<T>) {
  return asValue(() => withServices(env, ctx, (deps) => work(adminCall(deps, ctx.props)), { writes: true }));
}
