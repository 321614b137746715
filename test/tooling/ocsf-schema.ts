// A JSON Schema for an OCSF event class, derived from the OCSF release files vendored in test/fixtures/ocsf-1.2.0/
// (the ocsf/ocsf-schema repository, tag v1.2.0; see its README.md). No npm package ships OCSF's schemas, so this
// compiles them the way the OCSF schema server does, for what the audit export writes:
// - a class's attributes are its own over its parents' (`extends`: authentication → iam → base_event), with the
//   `includes/` files it names merged in (classification, occurrence: activity, class, type, time); profiles are
//   optional additions and are left out, so an attribute only a profile defines is refused;
// - an attribute's type comes from the class or object, else from dictionary.json; scalar types resolve to JSON types
//   through dictionary.json's `types` (timestamp_t → long_t → integer), objects to their own schema (objects/*.json,
//   with their own `extends`), `is_array` to an array, an enum to its values (the dictionary's and the class's);
// - `requirement: required` is required, `constraints` (`at_least_one`, `just_one`) become anyOf / oneOf;
// - unknown attributes are refused (`additionalProperties: false`), except in `object`-typed ones (`unmapped`);
// - `class_uid`, `category_uid` and `type_uid` are fixed by the class (type_uid = class_uid · 100 + activity_id).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const OCSF_DIR = join(process.cwd(), "test/fixtures/ocsf-1.2.0");

type Json = Record<string, unknown>;
interface AttributeSpec {
  type?: string;
  is_array?: boolean;
  enum?: Record<string, unknown>;
  requirement?: string;
}
interface Definition {
  name: string;
  extends?: string;
  uid?: number;
  category?: string;
  attributes: Record<string, AttributeSpec | string[]>;
  constraints?: { at_least_one?: string[]; just_one?: string[] };
}

const read = (path: string) => JSON.parse(readFileSync(join(OCSF_DIR, path), "utf8")) as Json;

const dictionary = read("dictionary.json") as {
  attributes: Record<string, AttributeSpec>;
  types: { attributes: Record<string, { type?: string; max_len?: number; range?: [number, number] }> };
};
const objects = new Map<string, Definition>(
  readdirSync(join(OCSF_DIR, "objects")).map((file) => {
    const definition = read(`objects/${file}`) as unknown as Definition;
    return [definition.name, definition];
  }),
);
const EVENTS: Record<string, string> = {
  base_event: "events/base_event.json",
  iam: "events/iam/iam.json",
  authentication: "events/iam/authentication.json",
  account_change: "events/iam/account_change.json",
};

interface Merged {
  attributes: Record<string, AttributeSpec>;
  constraints: Definition["constraints"];
}

function merged(definition: Definition, parent: (name: string) => Definition | undefined): Merged {
  const base = definition.extends ? parent(definition.extends) : undefined;
  const inherited: Merged = base ? merged(base, parent) : { attributes: {}, constraints: undefined };
  const attributes: Record<string, AttributeSpec> = { ...inherited.attributes };
  const add = (name: string, spec: AttributeSpec) => {
    const before = attributes[name];
    attributes[name] = { ...before, ...spec, enum: { ...before?.enum, ...spec.enum } };
  };
  for (const [name, spec] of Object.entries(definition.attributes)) {
    if (name === "$include") {
      for (const path of spec as string[]) {
        if (!path.startsWith("includes/")) continue;
        for (const [n, s] of Object.entries(
          (read(path) as { attributes: Record<string, AttributeSpec> }).attributes,
        )) {
          add(n, s);
        }
      }
      continue;
    }
    add(name, spec as AttributeSpec);
  }
  return { attributes, constraints: definition.constraints ?? inherited.constraints };
}

function scalar(type: string): Json | null {
  const known = dictionary.types.attributes[type];
  if (!known) return null;
  const bounds: Json = {
    ...(known.max_len ? { maxLength: known.max_len } : {}),
    ...(known.range ? { minimum: known.range[0], maximum: known.range[1] } : {}),
  };
  if (known.type) return { ...scalar(known.type), ...bounds };
  const base: Record<string, Json> = {
    string_t: { type: "string" },
    integer_t: { type: "integer" },
    long_t: { type: "integer" },
    float_t: { type: "number" },
    boolean_t: { type: "boolean" },
    json_t: {},
  };
  return { ...base[type], ...bounds };
}

function attributeSchema(name: string, spec: AttributeSpec, definitions: Record<string, Json>): Json {
  const word = dictionary.attributes[name];
  if (!word && !spec.type) throw new Error(`OCSF: ${name} is not in the dictionary`);
  const type = spec.type ?? word!.type!;
  const values = Object.keys({ ...word?.enum, ...spec.enum });
  let schema: Json;
  if (type === "object") schema = { type: "object" };
  else {
    const simple = scalar(type);
    if (simple) {
      schema = simple;
      if (values.length > 0)
        schema = { ...schema, enum: values.map((v) => (schema.type === "integer" ? Number(v) : v)) };
    } else {
      objectSchema(type, definitions);
      schema = { $ref: `#/definitions/${type}` };
    }
  }
  return (spec.is_array ?? word?.is_array) ? { type: "array", items: schema } : schema;
}

function shape(
  attributes: Record<string, AttributeSpec>,
  constraints: Definition["constraints"],
  definitions: Record<string, Json>,
): Json {
  const properties = Object.fromEntries(
    Object.entries(attributes).map(([name, spec]) => [name, attributeSchema(name, spec, definitions)]),
  );
  const required = Object.entries(attributes)
    .filter(([, spec]) => spec.requirement === "required")
    .map(([name]) => name);
  return {
    type: "object",
    properties,
    required,
    additionalProperties: false,
    ...(constraints?.at_least_one
      ? { anyOf: constraints.at_least_one.map((name) => ({ required: [name] })) }
      : {}),
    ...(constraints?.just_one ? { oneOf: constraints.just_one.map((name) => ({ required: [name] })) } : {}),
  };
}

function objectSchema(name: string, definitions: Record<string, Json>): void {
  if (definitions[name]) return;
  const definition = objects.get(name);
  if (!definition) throw new Error(`OCSF: no object ${name}`);
  definitions[name] = {};
  const { attributes, constraints } = merged(definition, (parent) =>
    parent === "object" ? undefined : objects.get(parent),
  );
  definitions[name] = shape(attributes, constraints, definitions);
}

/** The JSON Schema (draft-07) of one IAM event class: `authentication` (3002) or `account_change` (3001). */
export function ocsfClassSchema(name: "authentication" | "account_change"): Json {
  const definition = read(EVENTS[name]!) as unknown as Definition;
  const categories = read("categories.json") as { attributes: Record<string, { uid: number }> };
  const category = categories.attributes.iam!.uid;
  const classUid = category * 1000 + definition.uid!;
  const { attributes, constraints } = merged(
    definition,
    (parent) => read(EVENTS[parent]!) as unknown as Definition,
  );
  const definitions: Record<string, Json> = {};
  const schema = shape(attributes, constraints, definitions);
  const activities = Object.keys(attributes.activity_id!.enum ?? {}).map(Number);
  const properties = schema.properties as Record<string, Json>;
  properties.class_uid = { const: classUid };
  properties.category_uid = { const: category };
  properties.type_uid = { enum: activities.map((activity) => classUid * 100 + activity) };
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: definition.name,
    ...schema,
    definitions,
  };
}
