import { Validator } from "@cfworker/json-schema";
import { LIMITS } from "./limits";

/**
 * The JSON Schema (2020-12) an admin may set for a type's fields: a self-contained tree of the keywords below, so
 * that validating a request costs at most its size times the schema's. Left out on purpose: references (`$ref`,
 * `$defs`, `$id`, `$anchor`, `$dynamicRef`: a schema that refers to itself or fetches another), `pattern` and
 * `patternProperties` (an admin's regular expression run on a client's string can backtrack for seconds, and the
 * Worker has no way to stop it; `enum`, `const`, `format` and the lengths cover what a type needs), and the
 * conditional and unevaluated keywords, which a type's fields do not need. An unknown keyword is refused rather than
 * ignored, so a schema never says more than is checked.
 */

type Check = (value: unknown, at: string, depth: number) => string | null;

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value);
const nonNegativeInteger: Check = (value, at) =>
  Number.isSafeInteger(value) && (value as number) >= 0 ? null : `${at} must be a non-negative integer`;
const finiteNumber: Check = (value, at) =>
  typeof value === "number" && Number.isFinite(value) ? null : `${at} must be a number`;
const text: Check = (value, at) =>
  typeof value === "string" && value.length <= LIMITS.stringChars ? null : `${at} must be a short string`;
const boolean: Check = (value, at) => (typeof value === "boolean" ? null : `${at} must be true or false`);
const anything: Check = () => null;

const INSTANCE_TYPES = ["object", "array", "string", "number", "integer", "boolean", "null"];
/** The formats @cfworker/json-schema checks; another would be ignored silently. */
const FORMATS = [
  "date",
  "time",
  "date-time",
  "duration",
  "uri",
  "uri-reference",
  "url",
  "email",
  "hostname",
].concat(["ipv4", "ipv6", "uuid"]);

const subschema: Check = (value, at, depth) => schemaProblem(value, at, depth + 1);
const subschemaOrBoolean: Check = (value, at, depth) =>
  typeof value === "boolean" ? null : subschema(value, at, depth);
const schemaList: Check = (value, at, depth) => {
  if (!Array.isArray(value) || value.length === 0 || value.length > LIMITS.members)
    return `${at} must be a non-empty array of schemas`;
  for (const [index, item] of value.entries()) {
    const problem = subschema(item, `${at}[${index}]`, depth);
    if (problem) return problem;
  }
  return null;
};

const KEYWORDS: Record<string, Check> = {
  $schema: (value, at) =>
    value === "https://json-schema.org/draft/2020-12/schema" ? null : `${at} must name draft 2020-12`,
  $comment: text,
  title: text,
  description: text,
  default: anything,
  examples: (value, at) => (Array.isArray(value) ? null : `${at} must be an array`),
  type: (value, at) => {
    const types = Array.isArray(value) ? value : [value];
    return types.length > 0 && types.every((type) => INSTANCE_TYPES.includes(type as string))
      ? null
      : `${at} must be one of ${INSTANCE_TYPES.join(", ")} (or an array of them)`;
  },
  enum: (value, at) =>
    Array.isArray(value) && value.length > 0 && value.length <= LIMITS.items
      ? null
      : `${at} must be a short array`,
  const: anything,
  properties: (value, at, depth) => {
    if (!isObject(value) || Object.keys(value).length > LIMITS.members)
      return `${at} must be an object of schemas`;
    for (const [name, property] of Object.entries(value)) {
      const problem = subschemaOrBoolean(property, `${at}.${name}`, depth);
      if (problem) return problem;
    }
    return null;
  },
  required: (value, at) =>
    Array.isArray(value) && value.every((name) => typeof name === "string") ? null : `${at} must list names`,
  additionalProperties: subschemaOrBoolean,
  propertyNames: subschema,
  minProperties: nonNegativeInteger,
  maxProperties: nonNegativeInteger,
  items: subschemaOrBoolean,
  prefixItems: schemaList,
  contains: subschema,
  minContains: nonNegativeInteger,
  maxContains: nonNegativeInteger,
  minItems: nonNegativeInteger,
  maxItems: nonNegativeInteger,
  uniqueItems: boolean,
  minLength: nonNegativeInteger,
  maxLength: nonNegativeInteger,
  format: (value, at) =>
    FORMATS.includes(value as string) ? null : `${at} must be one of ${FORMATS.join(", ")}`,
  minimum: finiteNumber,
  maximum: finiteNumber,
  exclusiveMinimum: finiteNumber,
  exclusiveMaximum: finiteNumber,
  multipleOf: (value, at) =>
    typeof value === "number" && Number.isFinite(value) && value > 0
      ? null
      : `${at} must be a positive number`,
  allOf: schemaList,
  anyOf: schemaList,
  oneOf: schemaList,
  not: subschema,
};

function schemaProblem(value: unknown, at: string, depth: number): string | null {
  if (depth > LIMITS.schemaDepth) return `${at} is nested more than ${LIMITS.schemaDepth} schemas deep`;
  if (!isObject(value)) return `${at} must be a schema (an object)`;
  for (const [keyword, argument] of Object.entries(value)) {
    const check = Object.hasOwn(KEYWORDS, keyword) ? KEYWORDS[keyword] : undefined;
    if (!check) return `${at} uses ${keyword}, which is not supported (docs/agents.md lists the keywords)`;
    const problem = check(argument, `${at}.${keyword}`, depth);
    if (problem) return problem;
  }
  return null;
}

/**
 * What is wrong with an admin's schema for a type's fields, or null. The root describes an object (the detail, its
 * `type` member aside); the library is then asked to take it, so what it cannot use is refused when set, not met
 * at the first request.
 */
export function typeSchemaProblem(schema: unknown): string | null {
  if (JSON.stringify(schema ?? null).length > LIMITS.schemaChars)
    return `the schema is longer than ${LIMITS.schemaChars} characters`;
  const problem = schemaProblem(schema, "schema", 0);
  if (problem) return problem;
  if ((schema as Record<string, unknown>).type !== "object") return "schema.type must be object";
  try {
    new Validator(schema as object, "2020-12").validate({});
  } catch (error) {
    return `the schema cannot be used: ${error instanceof Error ? error.message : String(error)}`;
  }
  return null;
}
