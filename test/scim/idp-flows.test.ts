// The request sequences Entra ID's and Okta's provisioning send (Microsoft's SCIM validator flow, "Tutorial: develop
// a SCIM endpoint"; Okta's SCIM 2.0 test suite), replayed in order, each answer checked against RFC 7643's schemas.
import { describe, expect, it } from "vitest";
import {
  body,
  GROUP_SCHEMA,
  groupJsonSchema,
  listJsonSchema,
  PATCH_OP,
  type ScimGroup,
  type ScimUser,
  scim,
  scimError,
  scimOrg,
  USER_SCHEMA,
  userJsonSchema,
} from "./support";

const ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
const userList = listJsonSchema(userJsonSchema);
const groupList = listJsonSchema(groupJsonSchema);
const q = encodeURIComponent;

describe("Entra ID's provisioning sequence", () => {
  it("creates, finds, patches (Entra's dialect), deactivates, groups and deletes", async () => {
    const org = await scimOrg("entra");
    const upn = `Adele.Vance@${org.domain}`;

    // 1. Does the user exist? (Entra always asks before it creates.)
    const none = await body<{ totalResults: number }>(
      await scim(org, "GET", `/Users?filter=${q(`userName eq "${upn}"`)}`),
      200,
      userList,
    );
    expect(none.totalResults).toBe(0);

    // 2. Create, with the enterprise extension and a work email.
    const created = await body<ScimUser>(
      await scim(org, "POST", "/Users", {
        schemas: [USER_SCHEMA, ENTERPRISE],
        externalId: "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef",
        userName: upn,
        active: true,
        displayName: "Adele Vance",
        emails: [{ primary: true, type: "work", value: upn }],
        name: { formatted: "Adele Vance", familyName: "Vance", givenName: "Adele" },
        [ENTERPRISE]: { department: "Retail", employeeNumber: "42" },
        roles: [],
      }),
      201,
      userJsonSchema,
    );
    expect(created.userName).toBe(upn.toLowerCase());
    expect(created.active).toBe(true);
    expect((created[ENTERPRISE] as { department: string }).department).toBe("Retail");

    // 3. Find by userName (any case: userName is caseExact false) and by externalId; 4. get by id.
    const found = await body<{ Resources: ScimUser[] }>(
      await scim(org, "GET", `/Users?filter=${q(`userName eq "${upn.toUpperCase()}"`)}`),
      200,
      userList,
    );
    expect(found.Resources.map((user) => user.id)).toEqual([created.id]);
    const byExternal = await body<{ Resources: ScimUser[] }>(
      await scim(org, "GET", `/Users?filter=${q('externalId eq "0a21f0f2-8d2a-4f8e-bf98-7363c4aed4ef"')}`),
      200,
      userList,
    );
    expect(byExternal.Resources).toHaveLength(1);
    await body(await scim(org, "GET", `/Users/${created.id}`), 200, userJsonSchema);

    // 5. Replace attributes, Entra style: capitalised ops, filtered paths, extension URNs.
    const patched = await body<ScimUser>(
      await scim(org, "PATCH", `/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [
          { op: "Replace", path: "name.givenName", value: "Adèle" },
          { op: "Replace", path: 'emails[type eq "work"].value', value: upn },
          { op: "Add", path: `${ENTERPRISE}:department`, value: "Sales" },
          { op: "Add", path: 'phoneNumbers[type eq "mobile"].value', value: "+1 555 0100" },
          { op: "Replace", path: "displayName", value: "Adèle Vance" },
        ],
      }),
      200,
      userJsonSchema,
    );
    expect(patched.name?.givenName).toBe("Adèle");
    expect(patched.name?.familyName).toBe("Vance");
    expect((patched[ENTERPRISE] as { department: string }).department).toBe("Sales");
    expect(patched.phoneNumbers).toEqual([{ type: "mobile", value: "+1 555 0100" }]);
    expect(patched.displayName).toBe("Adèle Vance");

    // 6. Remove an attribute.
    const removed = await body<ScimUser>(
      await scim(org, "PATCH", `/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Remove", path: 'phoneNumbers[type eq "mobile"]' }],
      }),
      200,
      userJsonSchema,
    );
    expect(removed.phoneNumbers).toEqual([]);

    // 7. Deactivate: Entra sends the boolean as a string.
    const inactive = await body<ScimUser>(
      await scim(org, "PATCH", `/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Replace", path: "active", value: "False" }],
      }),
      200,
      userJsonSchema,
    );
    expect(inactive.active).toBe(false);

    // 8. Groups: does it exist (members excluded), create, add a member, check membership by filter, remove it.
    const noGroup = await body<{ totalResults: number }>(
      await scim(org, "GET", `/Groups?excludedAttributes=members&filter=${q('displayName eq "Sales Team"')}`),
      200,
      groupList,
    );
    expect(noGroup.totalResults).toBe(0);
    const group = await body<ScimGroup>(
      await scim(org, "POST", "/Groups", {
        schemas: [GROUP_SCHEMA],
        externalId: "8aa1a0c0-c4c3-4bc0-b4a5-2ef676900159",
        displayName: "Sales Team",
        members: [],
      }),
      201,
      groupJsonSchema,
    );
    await body(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Add", path: "members", value: [{ value: created.id }] }],
      }),
      200,
      groupJsonSchema,
    );
    const isMember = await body<{ totalResults: number; Resources: ScimGroup[] }>(
      await scim(
        org,
        "GET",
        `/Groups?excludedAttributes=members&filter=${q(`id eq "${group.id}" and members[value eq "${created.id}"]`)}`,
      ),
      200,
      groupList,
    );
    expect(isMember.totalResults).toBe(1);
    expect(isMember.Resources[0]!.members).toBeUndefined();
    const user = await body<ScimUser>(await scim(org, "GET", `/Users/${created.id}`), 200, userJsonSchema);
    expect(user.groups).toEqual([{ value: group.id, display: "Sales Team", type: "direct" }]);
    const emptied = await body<ScimGroup>(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Remove", path: "members", value: [{ value: created.id }] }],
      }),
      200,
      groupJsonSchema,
    );
    expect(emptied.members).toEqual([]);
    const renamed = await body<ScimGroup>(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "Replace", path: "displayName", value: "Sales EMEA" }],
      }),
      200,
      groupJsonSchema,
    );
    expect(renamed.displayName).toBe("Sales EMEA");

    // 9. Delete the group and the user; both are gone.
    expect((await scim(org, "DELETE", `/Groups/${group.id}`)).status).toBe(204);
    await scimError(await scim(org, "GET", `/Groups/${group.id}`), 404);
    expect((await scim(org, "DELETE", `/Users/${created.id}`)).status).toBe(204);
    await scimError(await scim(org, "GET", `/Users/${created.id}`), 404);
  });
});

describe("Okta's provisioning sequence", () => {
  it("lists, creates, finds, replaces, deactivates, pushes a group and deletes", async () => {
    const org = await scimOrg("okta");
    const login = `isaac.brock@${org.domain}`;

    // 1. The connector test: a page of one.
    await body(await scim(org, "GET", "/Users?count=1&startIndex=1"), 200, userList);
    // 2. Not there yet.
    const none = await body<{ totalResults: number }>(
      await scim(org, "GET", `/Users?filter=${q(`userName eq "${login}"`)}&startIndex=1&count=100`),
      200,
      userList,
    );
    expect(none.totalResults).toBe(0);

    // 3. Create; Okta sends a password, which is never stored nor answered.
    const created = await body<ScimUser>(
      await scim(org, "POST", "/Users", {
        schemas: [USER_SCHEMA],
        userName: login,
        name: { givenName: "Isaac", familyName: "Brock" },
        emails: [{ primary: true, value: login, type: "work" }],
        displayName: "Isaac Brock",
        locale: "en-US",
        externalId: "00ujl29u0le5T6Aj10h7",
        groups: [],
        password: "1mz050nq",
        active: true,
      }),
      201,
      userJsonSchema,
    );
    expect(created.password).toBeUndefined();
    expect(created.locale).toBe("en-US");

    // 4. Get by id; 5. find by userName.
    await body(await scim(org, "GET", `/Users/${created.id}`), 200, userJsonSchema);
    const found = await body<{ Resources: ScimUser[] }>(
      await scim(org, "GET", `/Users?filter=${q(`userName eq "${login}"`)}&startIndex=1&count=100`),
      200,
      userList,
    );
    expect(found.Resources[0]!.id).toBe(created.id);

    // 6. Profile update: PUT of the whole user.
    const replaced = await body<ScimUser>(
      await scim(org, "PUT", `/Users/${created.id}`, {
        schemas: [USER_SCHEMA],
        id: created.id,
        userName: login,
        name: { givenName: "Another", familyName: "Brock" },
        emails: [{ primary: true, value: login, type: "work" }],
        externalId: "00ujl29u0le5T6Aj10h7",
        active: true,
      }),
      200,
      userJsonSchema,
    );
    expect(replaced.name?.givenName).toBe("Another");
    expect(replaced.locale).toBeUndefined(); // PUT replaces: what it leaves out is gone

    // 7. Deactivate: Okta's path-less replace.
    const inactive = await body<ScimUser>(
      await scim(org, "PATCH", `/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", value: { active: false } }],
      }),
      200,
      userJsonSchema,
    );
    expect(inactive.active).toBe(false);
    // Reactivate.
    const active = await body<ScimUser>(
      await scim(org, "PATCH", `/Users/${created.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", value: { active: true } }],
      }),
      200,
      userJsonSchema,
    );
    expect(active.active).toBe(true);

    // 8. An unknown id is 404 in SCIM's body.
    await scimError(await scim(org, "GET", "/Users/010101010101"), 404);

    // 9. Group push: create, add, remove by filter, rename path-less, replace, delete.
    const group = await body<ScimGroup>(
      await scim(org, "POST", "/Groups", {
        schemas: [GROUP_SCHEMA],
        displayName: "Test SCIMv2",
        members: [],
      }),
      201,
      groupJsonSchema,
    );
    const added = await body<ScimGroup>(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "add", path: "members", value: [{ value: created.id, display: login }] }],
      }),
      200,
      groupJsonSchema,
    );
    expect(added.members?.map((member) => member.value)).toEqual([created.id]);
    const removed = await body<ScimGroup>(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "remove", path: `members[value eq "${created.id}"]` }],
      }),
      200,
      groupJsonSchema,
    );
    expect(removed.members).toEqual([]);
    const renamed = await body<ScimGroup>(
      await scim(org, "PATCH", `/Groups/${group.id}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: "replace", value: { id: group.id, displayName: "Test SCIMv2 renamed" } }],
      }),
      200,
      groupJsonSchema,
    );
    expect(renamed.displayName).toBe("Test SCIMv2 renamed");
    const put = await body<ScimGroup>(
      await scim(org, "PUT", `/Groups/${group.id}`, {
        schemas: [GROUP_SCHEMA],
        displayName: "Test SCIMv2",
        members: [{ value: created.id }],
      }),
      200,
      groupJsonSchema,
    );
    expect(put.members?.map((member) => member.value)).toEqual([created.id]);
    const listed = await body<{ Resources: ScimGroup[] }>(
      await scim(org, "GET", `/Groups?filter=${q('displayName eq "test scimv2"')}`),
      200,
      groupList,
    );
    expect(listed.Resources.map((g) => g.id)).toEqual([group.id]);
    expect((await scim(org, "DELETE", `/Groups/${group.id}`)).status).toBe(204);
    expect((await scim(org, "DELETE", `/Users/${created.id}`)).status).toBe(204);
  });
});
