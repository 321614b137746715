import { Validator } from "@cfworker/json-schema";
import { type AuthorizationDetail, authorizationDetailsError, parseAuthorizationDetails } from "./parse";
import type { AuthorizationDetailsType, ClientWithDetailTypes } from "./types-config";

/**
 * RFC 9396 §5: each detail's type must be one the client may use, and its fields (every member but `type`) must match
 * the type's schema. Validators are kept per schema text, a few hundred at most, so a busy isolate builds each once.
 */

const validators = new Map<string, Validator>();
const MAX_VALIDATORS = 200;

function validatorFor(schema: Record<string, unknown>): Validator {
  const key = JSON.stringify(schema);
  let validator = validators.get(key);
  if (!validator) {
    if (validators.size >= MAX_VALIDATORS) validators.clear();
    validator = new Validator(schema, "2020-12", true);
    validators.set(key, validator);
  }
  return validator;
}

export function typeConfigOf(
  client: ClientWithDetailTypes,
  type: string,
): AuthorizationDetailsType | undefined {
  return client.authorizationDetailsTypes.find((entry) => entry.type === type);
}

/** Throws `invalid_authorization_details` for the first detail whose type is not allowed or whose fields do not match. */
export function validateAuthorizationDetails(
  client: ClientWithDetailTypes,
  details: AuthorizationDetail[],
): void {
  for (const [index, detail] of details.entries()) {
    const config = typeConfigOf(client, detail.type);
    // The type's name is not echoed: it is the client's text, and the answer may be shown or logged.
    if (!config)
      throw authorizationDetailsError(`authorization_details[${index}] has a type this client may not use`);
    const { type: _type, ...fields } = detail;
    let result: ReturnType<Validator["validate"]>;
    try {
      result = validatorFor(config.schema).validate(fields);
    } catch {
      // The schema passed the subset's checks (schema-subset.ts) and was built once already: a throw here is the
      // library's, and the client hears that its detail could not be taken rather than a 500.
      throw authorizationDetailsError(
        `authorization_details[${index}] could not be checked against its type`,
      );
    }
    if (!result.valid) {
      const first = result.errors.at(-1);
      const where = first?.instanceLocation.replace(/^#/, "") || "/";
      throw authorizationDetailsError(`authorization_details[${index}] does not match its type at ${where}`);
    }
  }
}

/**
 * The granted details whose type the client may still use: an admin who takes a type away from a client ends it in
 * the tokens issued from then on (a refresh), as the grant's other details go on. Undefined when none is left.
 */
export function stillAllowedDetails(
  client: ClientWithDetailTypes,
  details: AuthorizationDetail[] | null | undefined,
): AuthorizationDetail[] | undefined {
  const allowed = details?.filter((detail) => typeConfigOf(client, detail.type) !== undefined);
  return allowed?.length ? allowed : undefined;
}

/**
 * The `authorization_details` parameter of a request from `client`: parsed, bounded and validated; undefined when the
 * request has none. One call for every endpoint that takes it (authorize, PAR, CIBA, token).
 */
export function requestedAuthorizationDetails(
  client: ClientWithDetailTypes,
  raw: string | null | undefined,
): AuthorizationDetail[] | undefined {
  const details = parseAuthorizationDetails(raw);
  if (details) validateAuthorizationDetails(client, details);
  return details;
}
