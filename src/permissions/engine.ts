// The package's exports map names only its JavaScript; the WASM beside its `web` build is imported by its file path so
// that Wrangler and the Vitest plugin precompile it as a module (wrangler.toml `[[rules]]`, src/wasm.d.ts): Workers
// refuse to compile WASM at run time, which is what the package's own loaders do. The package types the file as
// wasm-bindgen's exports; the rule makes it a module, the default export (src/wasm.d.ts), read through the namespace.
//
// Nothing imports this module, or relation-uses.ts, statically: the checks, searches and writes that need Cedar load
// them when they run (cedar.ts). Deployed, that changes nothing: wrangler bundles the dynamic imports into the one
// script, and the WASM is a module of the upload as before. Under the Vitest plugin, a module outside the graph Vite
// transforms reaches workerd as JSON, a WASM file as an array of numbers: Cedar's 3.4 MB are 12 MB of JSON, seconds
// of a workerd's start, which the test files that never check a permission no longer pay (docs/decisions.md, "Test
// cost: what a workerd start is made of").

import {
  type AuthorizationCall,
  checkParsePolicySet,
  checkParseSchema,
  type DetailedError,
  type EntityJson,
  initSync,
  policySetTextToParts,
  preparsePolicySet,
  schemaToJson,
  statefulIsAuthorized,
  validate,
} from "@cedar-policy/cedar-wasm/web";
import * as cedarWasm from "../../node_modules/@cedar-policy/cedar-wasm/web/cedar_wasm_bg.wasm";

/**
 * Cedar (`@cedar-policy/cedar-wasm`), instantiated once per isolate on first use. Instantiating a precompiled module is
 * synchronous and touches no I/O, so nothing of one request is held for another.
 */
let ready = false;
export function cedar(): void {
  if (ready) return;
  initSync({ module: (cedarWasm as unknown as { default: WebAssembly.Module }).default });
  ready = true;
}

/** Cedar's messages, one line each, as an admin reads them in a refusal. */
export function cedarMessages(errors: readonly DetailedError[]): string {
  return errors.map((error) => (error.help ? `${error.message} (${error.help})` : error.message)).join("; ");
}

/** Where a policy's own name is written: `@id("…")` among the annotations before its effect. */
const ID_ANNOTATION =
  /^(?:\s|\/\/[^\n]*)*(?:@\w+(?:\(\s*"(?:[^"\\]|\\.)*"\s*\))?\s*)*?@id\(\s*"((?:[^"\\]|\\.)*)"\s*\)/;

/**
 * The set as Cedar's policies by id: a policy's `@id("…")` when it has one (so that validation errors and a decision's
 * reasons name it), else `policy<n>` by its place in the text, as Cedar names them. Templates are not taken: nothing
 * links them. A string when the text does not parse, or two policies share an id.
 */
function policiesById(text: string): Record<string, string> | string {
  const parts = policySetTextToParts(text);
  if (parts.type === "failure") return cedarMessages(parts.errors);
  if (parts.policy_templates.length > 0) return "policy templates are not supported: write each policy out";
  const byId: Record<string, string> = {};
  for (const [index, policy] of parts.policies.entries()) {
    const id = ID_ANNOTATION.exec(policy)?.[1] ?? `policy${index}`;
    if (id in byId) return `two policies have the id ${JSON.stringify(id)}`;
    byId[id] = policy;
  }
  return byId;
}

/**
 * The actions of the schema's unnamed namespace that may apply to a resource type (`Action::"<name>"`, the only ones
 * a request's `action.name` can name), in the schema's order. None when the schema does not parse.
 */
export function schemaActions(schema: string, resourceType: string): string[] {
  cedar();
  const answer = schemaToJson(schema);
  if (answer.type === "failure") return [];
  const actions = answer.json[""]?.actions ?? {};
  return Object.entries(actions)
    .filter(([, action]) => {
      const types = action.appliesTo?.resourceTypes;
      return types === undefined || types.includes(resourceType);
    })
    .map(([name]) => name);
}

/** Null when the schema text parses, else Cedar's message. */
export function schemaProblem(schema: string): string | null {
  cedar();
  const answer = checkParseSchema(schema);
  return answer.type === "success" ? null : cedarMessages(answer.errors);
}

/**
 * Null when the policy set parses and validates against the schema in Cedar's strict mode, else Cedar's message (its
 * validation errors name the policy, `policy0`, `policy1`, … in the order of the text, or its `@id`).
 */
export function policiesProblem(policies: string, schema: string): string | null {
  cedar();
  const parsed = checkParsePolicySet({ staticPolicies: policies });
  if (parsed.type === "failure") return cedarMessages(parsed.errors);
  const byId = policiesById(policies);
  if (typeof byId === "string") return byId;
  const answer = validate({ schema, policies: { staticPolicies: byId } });
  if (answer.type === "failure") return cedarMessages(answer.errors);
  if (answer.validationErrors.length === 0) return null;
  return answer.validationErrors
    .map(({ policyId, error }) => `${policyId}: ${cedarMessages([error])}`)
    .join("; ");
}

export interface EntityRef {
  type: string;
  id: string;
}

export interface CedarQuery {
  principal: EntityRef;
  action: EntityRef;
  resource: EntityRef;
  context: AuthorizationCall["context"];
  entities: EntityJson[];
}

/** Allow or deny and the policies that decided it; or Cedar's message when the request's data does not parse. */
export type CedarOutcome = { allowed: boolean; reasons: string[] } | { refused: string };

/** The policy set Cedar holds parsed in this isolate (its version), so that a check does not parse the text again. */
let preparsed: number | null = null;
const PREPARSED_ID = "active";

/**
 * One authorization against the policy set of `version`. Evaluated without the schema: the schema holds the
 * policies' text to account when they are written; the service's own entities carry attributes (a user's metadata)
 * that no schema can list in advance.
 */
export function authorize(set: { version: number; policies: string }, query: CedarQuery): CedarOutcome {
  cedar();
  if (preparsed !== set.version) {
    const byId = policiesById(set.policies);
    // The set in force was validated when it was written: this is a fault, not the request's.
    if (typeof byId === "string") throw new Error(`the policy set in force does not parse: ${byId}`);
    const parsed = preparsePolicySet(PREPARSED_ID, { staticPolicies: byId });
    if (parsed.type === "failure") {
      throw new Error(`the policy set in force does not parse: ${cedarMessages(parsed.errors)}`);
    }
    preparsed = set.version;
  }
  const answer = statefulIsAuthorized({ ...query, preparsedPolicySetId: PREPARSED_ID });
  if (answer.type === "failure") return { refused: cedarMessages(answer.errors) };
  const { decision, diagnostics } = answer.response;
  return { allowed: decision === "allow", reasons: diagnostics.reason };
}
