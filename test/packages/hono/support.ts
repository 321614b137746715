// Shared by the package's tests: the example's Cedar schema and policies set through the admin API (and the ones in
// force put back after), a document's editors stored as a relationship, and a fetch that counts what it sends.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import examplePolicies from "../../../examples/workers-binding/policies.cedar?raw";
import exampleSchema from "../../../examples/workers-binding/schema.cedarschema?raw";
import type { TestService } from "../../helpers";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (svc: TestService, method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin/authz${path}`, { headers: ADMIN, json });

// The example's own files (the workers pool has no file system: Vite inlines them).
export const EXAMPLE_SCHEMA = exampleSchema;
export const EXAMPLE_POLICIES = examplePolicies;

/** Sets the example's schema and policies; answers a function that puts back what was in force. */
export async function useExamplePolicies(svc: TestService): Promise<() => Promise<void>> {
  const read = async (kind: "schema" | "policies") =>
    ((await (await admin(svc, "GET", `/${kind}`)).json()) as Record<string, string | null>)[kind] ?? null;
  const before = { schema: await read("schema"), policies: await read("policies") };
  // No policies first: whatever a file before this one left in force validates against the example's schema.
  await admin(svc, "PUT", "/policies", { policies: "" });
  for (const [kind, text] of [
    ["schema", EXAMPLE_SCHEMA],
    ["policies", EXAMPLE_POLICIES],
  ] as const) {
    const answer = await admin(svc, "PUT", `/${kind}`, { [kind]: text });
    expect(answer.status, await answer.clone().text()).toBe(200);
  }
  return async () => {
    // Empty policies first: any schema then validates them, the old schema included.
    await admin(svc, "PUT", "/policies", { policies: "" });
    if (before.schema !== null) await admin(svc, "PUT", "/schema", { schema: before.schema });
    if (before.policies !== null) await admin(svc, "PUT", "/policies", { policies: before.policies });
  };
}

/** Stores `userId` as an editor of document `id`. */
export async function makeEditor(svc: TestService, id: string, userId: string): Promise<void> {
  const tuple = {
    resource: { type: "Document", id },
    relation: "editors",
    subject: { type: "User", id: userId },
  };
  const answer = await admin(svc, "POST", "/relationships", tuple);
  expect(answer.status, await answer.clone().text()).toBe(201);
}
