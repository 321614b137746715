// Shared by the permissions tests: the admin API's calls, a PEP's token (client credentials with `authzen`), the
// AuthZEN calls at the host's root, and a user made with the roles a test needs.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import { SERVER, type TestService, uniqueEmail } from "../helpers";
import { basic, newClient, postForm } from "../oauth2/support";

export const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

export const admin = (svc: TestService, method: string, path: string, json?: unknown) =>
  svc.request(method, path, { headers: ADMIN, json });

/** Sets the schema then the policy set; both must be accepted. */
export async function usePolicies(svc: TestService, schema: string, policies: string): Promise<void> {
  // No policies first: whatever a file before this one left in force validates against any schema.
  await admin(svc, "PUT", "/admin/authz/policies", { policies: "" });
  const schemaAnswer = await admin(svc, "PUT", "/admin/authz/schema", { schema });
  expect(schemaAnswer.status, await schemaAnswer.clone().text()).toBe(200);
  const policyAnswer = await admin(svc, "PUT", "/admin/authz/policies", { policies });
  expect(policyAnswer.status, await policyAnswer.clone().text()).toBe(200);
}

/** An access token of a machine client (client_credentials) with the given scopes. */
export async function pepToken(svc: TestService, scopes = ["authzen"]): Promise<string> {
  const client = await newClient(svc, { grantTypes: ["client_credentials"], redirectUris: [], scopes });
  const response = await postForm(svc, "/oauth2/token", { grant_type: "client_credentials" }, basic(client));
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

/** POST to an AuthZEN endpoint at the host's root (not under the auth prefix). */
export function access(
  svc: TestService,
  path: "evaluation" | "evaluations",
  body: unknown,
  headers: Record<string, string>,
): Promise<Response> {
  return svc.request("POST", `${SERVER}/access/v1/${path}`, {
    body: typeof body === "string" ? body : JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });
}

/** A user created through the admin API with these roles (the first is the default). */
export async function userWith(svc: TestService, roles: string[], email = uniqueEmail("authz")) {
  const created = await admin(svc, "POST", "/admin/users", { email, emailVerified: true });
  expect(created.status).toBe(201);
  const { id } = (await created.json()) as { id: string };
  const patched = await admin(svc, "PATCH", `/admin/users/${id}`, { roles, defaultRole: roles[0] });
  expect(patched.status, await patched.clone().text()).toBe(200);
  return { id, email };
}

/** The base every test schema starts from: the service's own entity types, as docs/permissions.md gives them. */
export const SERVICE_SCHEMA = `
entity Role;
entity Org;
entity OrgRole in [Org];
entity User in [Role, OrgRole] {
  email?: String,
  emailVerified: Bool,
  roles: Set<String>,
  defaultRole: String,
  metadata: {},
};
`;
