// What SCIM maps onto the service: discovery documents, paging, groups that give org roles, an existing user
// linked rather than duplicated.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { slotOfUser } from "../../src/db/shards";
import { signUp } from "../helpers";
import {
  body,
  createUser,
  groupJsonSchema,
  listJsonSchema,
  PATCH_OP,
  type ScimUser,
  scim,
  scimError,
  scimOrg,
  svc,
  userJsonSchema,
} from "./support";

const roleOf = async (orgId: string, userId: string) =>
  (
    await env.DB.prepare("SELECT role FROM org_members WHERE org_id = ? AND user_id = ?")
      .bind(orgId, userId)
      .first<{ role: string }>()
  )?.role;

describe("discovery (RFC 7644 §4)", () => {
  it("ServiceProviderConfig, ResourceTypes and Schemas, without a token", async () => {
    const config = await body<{ patch: { supported: boolean }; filter: { maxResults: number } }>(
      await svc.request("GET", "/scim/v2/ServiceProviderConfig"),
      200,
      {
        type: "object",
        required: [
          "schemas",
          "patch",
          "bulk",
          "filter",
          "changePassword",
          "sort",
          "etag",
          "authenticationSchemes",
        ],
      },
    );
    expect(config.patch.supported).toBe(true);
    const types = await body<{ Resources: { id: string }[] }>(
      await svc.request("GET", "/scim/v2/ResourceTypes"),
      200,
      listJsonSchema({ type: "object", required: ["id", "name", "endpoint", "schema"] }),
    );
    expect(types.Resources.map((type) => type.id)).toEqual(["User", "Group"]);
    const schemas = await body<{ Resources: { id: string; attributes: { name: string }[] }[] }>(
      await svc.request("GET", "/scim/v2/Schemas"),
      200,
      listJsonSchema({ type: "object", required: ["id", "attributes"] }),
    );
    expect(schemas.Resources[0]!.attributes.map((a) => a.name)).toContain("userName");
    await body(await svc.request("GET", "/scim/v2/ResourceTypes/User"), 200, {
      type: "object",
      required: ["schema"],
    });
    await body(
      await svc.request("GET", "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group"),
      200,
      { type: "object", required: ["attributes"] },
    );
    await scimError(await svc.request("GET", "/scim/v2/ResourceTypes/Nope"), 404);
  });
});

describe("users", () => {
  it("pages with startIndex (1-based) and count", async () => {
    const org = await scimOrg("paging");
    const created: ScimUser[] = [];
    for (const n of [1, 2, 3])
      created.push(await createUser(org, `p${n}-${crypto.randomUUID().slice(0, 4)}`));
    const page = await body<{
      totalResults: number;
      startIndex: number;
      itemsPerPage: number;
      Resources: ScimUser[];
    }>(await scim(org, "GET", "/Users?startIndex=3&count=1"), 200, listJsonSchema(userJsonSchema));
    // The owner who created the org is its first user.
    expect(page.totalResults).toBe(4);
    expect(page.startIndex).toBe(3);
    expect(page.itemsPerPage).toBe(1);
    expect(page.Resources[0]!.id).toBe(created[1]!.id);
    const counted = await body<{ totalResults: number; Resources: unknown[] }>(
      await scim(org, "GET", "/Users?count=0"),
      200,
      listJsonSchema(userJsonSchema),
    );
    expect(counted).toMatchObject({ totalResults: 4, Resources: [] });
    const projected = await body<{ Resources: Record<string, unknown>[] }>(
      await scim(org, "GET", "/Users?attributes=userName"),
      200,
      listJsonSchema({ type: "object", required: ["id", "userName"] }),
    );
    expect(Object.keys(projected.Resources[0]!).sort()).toEqual(["id", "schemas", "userName"]);
    const byEmail = await body<{ totalResults: number }>(
      await scim(
        org,
        "GET",
        `/Users?filter=${encodeURIComponent(`emails[type eq "work" and value eq "${created[0]!.userName}"]`)}`,
      ),
      200,
      listJsonSchema(userJsonSchema),
    );
    expect(byEmail.totalResults).toBe(1);
  });

  it("an existing account in the domain is linked, not duplicated; a provisioned user's name follows the IdP", async () => {
    const org = await scimOrg("link");
    const email = `self-${crypto.randomUUID().slice(0, 6)}@${org.domain}`;
    const own = await signUp(svc, email, { displayName: "Chosen Name" });
    const linked = await createUser(org, email.split("@")[0], { displayName: "IdP Name" });
    expect(linked.id).toBe(own.user.id);
    // The org didn't create the account: its IdP doesn't rename it.
    const me = (await (await svc.get("/user", own.accessToken)).json()) as { displayName: string };
    expect(me.displayName).toBe("Chosen Name");
    const fresh = await createUser(org, undefined, { displayName: "Fresh Person" });
    const row = await svc.request("GET", `/admin/users/${fresh.id}`, {
      headers: { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) },
    });
    expect(((await row.json()) as { displayName: string; emailVerified: boolean }).displayName).toBe(
      "Fresh Person",
    );
    // Both memberships carry their user's slot (an org switch from the user's shard reads it beside the rotation).
    for (const id of [linked.id, fresh.id]) {
      const slot = await env.DB.prepare(
        "SELECT user_slot AS slot FROM org_members WHERE org_id = ? AND user_id = ?",
      )
        .bind(org.id, id)
        .first<{ slot: number }>();
      expect(slot?.slot).toBe(slotOfUser(id));
    }
  });
});

describe("groups and org roles", () => {
  // Threat: an IdP group seizing ownership of the org, or a role lingering after the IdP took it away.
  it("a group named after an org role gives it while the user is in it; owner is never given", async () => {
    const org = await scimOrg("roles");
    const user = await createUser(org);
    const admins = await body<{ id: string }>(
      await scim(org, "POST", "/Groups", { displayName: "Admin", members: [{ value: user.id }] }),
      201,
      groupJsonSchema,
    );
    expect(await roleOf(org.id, user.id)).toBe("admin");
    await body(
      await scim(org, "PATCH", `/Groups/${admins.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "remove", path: `members[value eq "${user.id}"]` }],
      }),
      200,
      groupJsonSchema,
    );
    expect(await roleOf(org.id, user.id)).toBe("member");
    await body(
      await scim(org, "PATCH", `/Groups/${admins.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "add", value: { members: [{ value: user.id }] } }],
      }),
      200,
      groupJsonSchema,
    );
    expect(await roleOf(org.id, user.id)).toBe("admin");
    expect((await scim(org, "DELETE", `/Groups/${admins.id}`)).status).toBe(204);
    expect(await roleOf(org.id, user.id)).toBe("member");
    await body(
      await scim(org, "POST", "/Groups", { displayName: "owner", members: [{ value: user.id }] }),
      201,
      groupJsonSchema,
    );
    expect(await roleOf(org.id, user.id)).toBe("member");
  });

  // Threat: the IdP locking the org out by deactivating or deleting its last owner.
  it("the org's last owner can't be deactivated or deleted through SCIM", async () => {
    const org = await scimOrg("lastowner");
    const owner = org.owner.user;
    await env.DB.prepare("UPDATE org_members SET external_id = 'o1' WHERE org_id = ? AND user_id = ?")
      .bind(org.id, owner.id)
      .run();
    await scimError(
      await scim(org, "PATCH", `/Users/${owner.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", path: "active", value: false }],
      }),
      409,
      "mutability",
    );
    await scimError(await scim(org, "DELETE", `/Users/${owner.id}`), 409, "mutability");
  });
});
