import { OAuth2Error } from "../errors";
import { LIMITS, shapeProblem } from "./limits";

/**
 * RFC 9396 §2: one authorization detail, an object whose `type` says what the other members mean. The members the
 * RFC names for every type (§2.2) keep their shapes here; the rest are the type's own, checked against the schema the
 * admin set for the type (validate.ts).
 */
export interface AuthorizationDetail {
  type: string;
  [field: string]: unknown;
}

/** RFC 9396 §5: the answer to authorization details of a type not allowed, malformed, or not matching the type. */
export const authorizationDetailsError = (description: string) =>
  new OAuth2Error("invalid_authorization_details", description);

/** RFC 9396 §2.2: the common fields, arrays of strings but `identifier`, a string. */
const STRING_ARRAY_FIELDS = ["locations", "actions", "datatypes", "privileges"] as const;

/** Controls and invisible formatting characters, refused in a type's name (it is shown, and compared). */
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/u;

export function typeNameProblem(type: unknown): string | null {
  if (typeof type !== "string" || type.length === 0) return "must be a non-empty string";
  if (type.length > LIMITS.typeChars) return `must be at most ${LIMITS.typeChars} characters`;
  if (INVISIBLE.test(type)) return "must not hold control or invisible characters";
  return null;
}

function detailProblem(detail: unknown): string | null {
  if (detail === null || typeof detail !== "object" || Array.isArray(detail)) return "is not an object";
  const record = detail as Record<string, unknown>;
  const typeProblem = typeNameProblem(record.type);
  if (typeProblem) return `type ${typeProblem}`;
  for (const field of STRING_ARRAY_FIELDS) {
    const value = record[field];
    if (value !== undefined && !(Array.isArray(value) && value.every((item) => typeof item === "string")))
      return `has ${field} that is not an array of strings`;
  }
  if (record.identifier !== undefined && typeof record.identifier !== "string")
    return "has an identifier that is not a string";
  return shapeProblem(detail);
}

/**
 * An already parsed `authorization_details` value (a JSON body, a stored grant) checked for its shape: a non-empty
 * array of at most LIMITS.details objects, each with a type. Throws `invalid_authorization_details` naming the first
 * problem; the value itself is returned unchanged (and now typed).
 */
export function checkAuthorizationDetailsShape(value: unknown): AuthorizationDetail[] {
  if (!Array.isArray(value) || value.length === 0)
    throw authorizationDetailsError("authorization_details must be a non-empty JSON array of objects");
  if (value.length > LIMITS.details)
    throw authorizationDetailsError(`authorization_details holds more than ${LIMITS.details} objects`);
  for (const [index, detail] of value.entries()) {
    const problem = detailProblem(detail);
    if (problem) throw authorizationDetailsError(`authorization_details[${index}] ${problem}`);
  }
  return value as AuthorizationDetail[];
}

/**
 * The `authorization_details` request parameter (RFC 9396 §2: JSON text, form-encoded in the request): undefined
 * when absent or empty (RFC 6749 §3.1: a parameter without a value is as if omitted). The text is bounded before it
 * is parsed, so a huge value costs nothing.
 */
export function parseAuthorizationDetails(raw: string | null | undefined): AuthorizationDetail[] | undefined {
  if (raw === undefined || raw === null || raw === "") return undefined;
  if (raw.length > LIMITS.requestChars)
    throw authorizationDetailsError(`authorization_details is longer than ${LIMITS.requestChars} characters`);
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw authorizationDetailsError("authorization_details is not JSON");
  }
  return checkAuthorizationDetailsShape(value);
}
