// What the SCIM tests share: an organization with a verified domain and a SCIM token, requests as an IdP sends them
// (`application/scim+json`), and RFC 7643's resources as compact JSON Schemas that every answer is checked against.
import { env } from "cloudflare:test";
import { Validator } from "@cfworker/json-schema";
import { expect } from "vitest";
import { NO_VERIFICATION, service, signUp, uniqueEmail, type WireSession } from "../helpers";

export const svc = service(NO_VERIFICATION);
export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
export const SCIM_TYPE = "application/scim+json";

export interface ScimOrg {
  id: string;
  owner: WireSession;
  domain: string;
  token: string;
}

/**
 * An organization created by a new owner over HTTP, with a domain marked verified in the home database (the
 * verification flows are the organizations' tests' business), and a SCIM token from the owner's route.
 */
export async function scimOrg(tag = "acme"): Promise<ScimOrg> {
  const owner = await signUp(svc, uniqueEmail(`${tag}-owner`));
  const created = await svc.request("POST", "/orgs", {
    token: owner.accessToken,
    json: { name: `${tag} org` },
  });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const domain = `${tag}-${crypto.randomUUID().slice(0, 8)}.example`;
  await env.DB.prepare(
    "INSERT INTO org_domains (org_id, domain, txt_value, verified_at, created_at) VALUES (?, ?, 'x', ?, ?)",
  )
    .bind(id, domain, Date.now(), Date.now())
    .run();
  const minted = await svc.request("POST", `/orgs/${id}/scim-tokens`, {
    token: owner.accessToken,
    json: { name: "IdP" },
  });
  expect(minted.status).toBe(201);
  const { token } = (await minted.json()) as { token: string };
  return { id, owner, domain, token };
}

/** A request as an IdP sends it: the SCIM token, and a body typed `application/scim+json`. */
export function scim(org: Pick<ScimOrg, "token">, method: string, path: string, body?: unknown) {
  const headers: Record<string, string> = { authorization: `Bearer ${org.token}` };
  if (body !== undefined) headers["content-type"] = SCIM_TYPE;
  return svc.request(method, `/scim/v2${path}`, {
    headers,
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User";
export const GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group";
export const PATCH_OP = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
export const ERROR_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:Error";
export const LIST_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:ListResponse";

const meta = (resourceType: string) => ({
  type: "object",
  required: ["resourceType", "location"],
  properties: {
    resourceType: { const: resourceType },
    created: { type: "string", format: "date-time" },
    lastModified: { type: "string", format: "date-time" },
    location: { type: "string", format: "uri" },
    version: { type: "string" },
  },
});

const multiValued = {
  type: "array",
  items: {
    type: "object",
    properties: {
      value: { type: "string" },
      type: { type: "string" },
      primary: { type: "boolean" },
      display: { type: "string" },
    },
  },
};

/** RFC 7643 §4.1 (User) as a JSON Schema: the attributes this service answers with, their types and cardinality. */
export const userJsonSchema = {
  type: "object",
  required: ["schemas", "id", "userName", "meta"],
  properties: {
    schemas: { type: "array", contains: { const: USER_SCHEMA }, items: { type: "string" } },
    id: { type: "string", minLength: 1 },
    externalId: { type: "string" },
    userName: { type: "string", minLength: 1 },
    displayName: { type: "string" },
    active: { type: "boolean" },
    name: {
      type: "object",
      properties: Object.fromEntries(
        ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].map(
          (k) => [k, { type: "string" }],
        ),
      ),
    },
    emails: multiValued,
    phoneNumbers: multiValued,
    groups: {
      type: "array",
      items: {
        type: "object",
        required: ["value"],
        properties: { value: { type: "string" }, display: { type: "string" } },
      },
    },
    password: false,
    meta: meta("User"),
  },
};

/** RFC 7643 §4.2 (Group). */
export const groupJsonSchema = {
  type: "object",
  required: ["schemas", "id", "displayName", "meta"],
  properties: {
    schemas: { type: "array", contains: { const: GROUP_SCHEMA }, items: { type: "string" } },
    id: { type: "string", minLength: 1 },
    externalId: { type: "string" },
    displayName: { type: "string", minLength: 1 },
    members: {
      type: "array",
      items: {
        type: "object",
        required: ["value"],
        properties: {
          value: { type: "string" },
          $ref: { type: "string", format: "uri" },
          type: { enum: ["User", "Group"] },
        },
      },
    },
    meta: meta("Group"),
  },
};

/** RFC 7644 §3.4.2 (ListResponse) of resources of `item`. */
export const listJsonSchema = (item: object) => ({
  type: "object",
  required: ["schemas", "totalResults", "Resources"],
  properties: {
    schemas: { type: "array", items: { const: LIST_SCHEMA }, minItems: 1 },
    totalResults: { type: "integer", minimum: 0 },
    startIndex: { type: "integer", minimum: 1 },
    itemsPerPage: { type: "integer", minimum: 0 },
    Resources: { type: "array", items: item },
  },
});

/** RFC 7644 §3.12 (Error): `status` is a string. */
export const errorJsonSchema = {
  type: "object",
  required: ["schemas", "status", "detail"],
  properties: {
    schemas: { type: "array", items: { const: ERROR_SCHEMA }, minItems: 1, maxItems: 1 },
    status: { type: "string", pattern: "^[45][0-9][0-9]$" },
    scimType: {
      enum: [
        "invalidFilter",
        "tooMany",
        "uniqueness",
        "mutability",
        "invalidSyntax",
        "invalidPath",
        "noTarget",
        "invalidValue",
        "invalidVers",
        "sensitive",
      ],
    },
    detail: { type: "string" },
  },
};

/** The body of a SCIM answer, after checking its media type and that it matches `schema`. */
export async function body<T = Record<string, unknown>>(
  response: Response,
  status: number,
  schema: object,
): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  expect(response.headers.get("content-type")).toMatch(/^application\/scim\+json/);
  const json = JSON.parse(text);
  const result = new Validator(schema as never, "2020-12", false).validate(json);
  expect(
    result.errors.map((e) => `${e.instanceLocation}: ${e.error}`),
    JSON.stringify(json),
  ).toEqual([]);
  return json as T;
}

/** A SCIM error answer with its status and `scimType`. */
export async function scimError(response: Response, status: number, scimType?: string) {
  const error = await body<{ status: string; scimType?: string; detail: string }>(
    response,
    status,
    errorJsonSchema,
  );
  expect(error.status).toBe(String(status));
  if (scimType) expect(error.scimType).toBe(scimType);
  return error;
}

export interface ScimUser {
  id: string;
  userName: string;
  active: boolean;
  externalId?: string;
  displayName?: string;
  name?: { givenName?: string; familyName?: string };
  emails?: { value: string; type?: string; primary?: boolean }[];
  [key: string]: unknown;
}

export interface ScimGroup {
  id: string;
  displayName: string;
  members?: { value: string }[];
}

/** Creates a SCIM user in the org's domain; 201. */
export async function createUser(
  org: ScimOrg,
  local = `u${crypto.randomUUID().slice(0, 8)}`,
  extra: object = {},
) {
  const response = await scim(org, "POST", "/Users", {
    schemas: [USER_SCHEMA],
    userName: `${local}@${org.domain}`,
    externalId: `ext-${local}`,
    name: { givenName: "Ana", familyName: "Lovelace" },
    emails: [{ value: `${local}@${org.domain}`, type: "work", primary: true }],
    active: true,
    ...extra,
  });
  return body<ScimUser>(response, 201, userJsonSchema);
}
