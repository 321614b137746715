import { AppError } from "../errors";
import { holdsLoneSurrogate } from "../lib/well-formed";

/**
 * An AuthZEN 1.0 evaluation (subject, action, resource, context) as the service accepts it, checked before anything
 * is read: the shape the specification requires (a missing part is a 400, its §"JSON Serialization"), the types the
 * service knows, and what a caller may never send (contract platform.md §2, "what the service knows always wins").
 */

/**
 * A refusal of the request itself: AuthZEN's 400 over HTTP, `{ ok: false, error: { code: "invalid-request" } }`
 * across the binding (src/platform/results.ts keeps a catalogue error's code and message).
 */
export class PermissionRequestError extends AppError {
  constructor(message: string) {
    super("invalid-request", message);
    this.name = "PermissionRequestError";
  }
}

/** How many evaluations one request may carry (AuthZEN's evaluations, the binding's checkMany). */
export const MAX_EVALUATIONS = 200;

export interface Entity {
  type: string;
  id: string;
  properties?: Record<string, unknown>;
}

export interface EvaluationRequest {
  subject: Entity;
  action: { name: string; properties?: Record<string, unknown> };
  resource: Entity;
  context?: Record<string, unknown>;
}

/** The only subject type: the service's own users (`User::"<id>"`), named by id or email. */
export const SUBJECT_TYPE = "user";

/** The entity types the service supplies itself; a request's resource of one of them brings no properties. */
export const SERVICE_TYPES = new Set(["User", "Role", "OrgRole", "Org"]);

/** The attributes the service gives `User::"<id>"`: a request's subject properties may not name them. */
export const USER_ATTRIBUTES = new Set(["email", "emailVerified", "roles", "defaultRole", "metadata"]);

/** Cedar's entity type names: identifiers joined by `::` (a namespace path). */
export const CEDAR_TYPE = /^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$/;

/** How deep a request's JSON may nest: AuthZEN §"Availability & Denial of Service" asks for a bound. */
export const MAX_DEPTH = 16;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** How deep a JSON value nests (a scalar is 0); stops counting past `limit`. */
export function depthOf(value: unknown, limit = MAX_DEPTH + 1): number {
  if (limit <= 0 || typeof value !== "object" || value === null) return 0;
  let deepest = 0;
  for (const item of Object.values(value)) deepest = Math.max(deepest, depthOf(item, limit - 1));
  return deepest + 1;
}

/**
 * Refuses Cedar's escapes anywhere in a value: `__entity` would make a property an entity reference (a caller naming
 * itself an editor of the document), `__extn` an extension value the service did not choose to build.
 */
export function refuseEscapes(value: unknown, where: string): void {
  if (typeof value !== "object" || value === null) return;
  for (const [key, item] of Object.entries(value)) {
    if (key === "__entity" || key === "__extn") {
      throw new PermissionRequestError(
        `${where} may not contain ${key}: entity references come from the service`,
      );
    }
    refuseEscapes(item, where);
  }
}

function optionalObject(value: unknown, where: string): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new PermissionRequestError(`${where} must be an object`);
  refuseEscapes(value, where);
  return value;
}

function entityOf(value: unknown, part: "subject" | "resource"): Entity {
  if (value === undefined) throw new PermissionRequestError(`missing ${part}`);
  if (!isObject(value)) throw new PermissionRequestError(`${part} must be an object`);
  const { type, id } = value;
  if (typeof type !== "string" || type === "") throw new PermissionRequestError(`missing ${part}.type`);
  if (typeof id !== "string" || id === "") throw new PermissionRequestError(`missing ${part}.id`);
  const properties = optionalObject(value.properties, `${part}.properties`);
  return { type, id, ...(properties ? { properties } : {}) };
}

/** A lone surrogate anywhere in a request: Cedar's parser refuses the whole call, so it is the request's fault. */
export function refuseMalformedText(value: unknown): void {
  if (holdsLoneSurrogate(value)) {
    throw new PermissionRequestError(
      "the request holds a string that is not well-formed Unicode (a lone surrogate)",
    );
  }
}

/** Checks one evaluation; throws PermissionRequestError with what is wrong. */
export function checkEvaluation(value: unknown): EvaluationRequest {
  if (!isObject(value)) throw new PermissionRequestError("an evaluation must be a JSON object");
  if (depthOf(value) > MAX_DEPTH)
    throw new PermissionRequestError(`the request nests deeper than ${MAX_DEPTH}`);
  refuseMalformedText(value);
  const subject = entityOf(value.subject, "subject");
  if (subject.type !== SUBJECT_TYPE) {
    throw new PermissionRequestError(
      `unknown subject type ${JSON.stringify(subject.type)}: the only one is "user"`,
    );
  }
  for (const name of Object.keys(subject.properties ?? {})) {
    if (USER_ATTRIBUTES.has(name)) {
      throw new PermissionRequestError(`subject.properties.${name} is the service's: it may not be sent`);
    }
  }
  const resource = entityOf(value.resource, "resource");
  if (!CEDAR_TYPE.test(resource.type) || resource.type === "Action") {
    throw new PermissionRequestError(
      `unknown resource type ${JSON.stringify(resource.type)}: not a Cedar type name`,
    );
  }
  if (
    SERVICE_TYPES.has(resource.type) &&
    resource.properties &&
    Object.keys(resource.properties).length > 0
  ) {
    throw new PermissionRequestError(
      `resource.properties: the service supplies ${resource.type}'s attributes`,
    );
  }
  const action = value.action;
  if (action === undefined) throw new PermissionRequestError("missing action");
  if (!isObject(action) || typeof action.name !== "string" || action.name === "") {
    throw new PermissionRequestError("missing action.name");
  }
  const context = optionalObject(value.context, "context");
  return {
    subject,
    action: { name: action.name },
    resource,
    ...(context ? { context } : {}),
  };
}
