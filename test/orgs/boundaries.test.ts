// Organization boundaries (contract organizations.md, "Organization boundaries"): every org route × every kind of
// caller → the status it must get. The threat the whole table covers: a member (even the owner) of org B, or a user
// of no org, reading or changing anything of org A: its settings, members, invitations, or a token that acts in it.
// An outsider gets 404 (the org's existence is not revealed), a member whose role does not allow it 403, no token 401.
//
// To cover a new org route (connections, domains, SCIM tokens…), add a row to ROUTES: its method, its path and body
// built from the world (`w.orgA`, `w.orgB`, the actors' sessions), an optional `setup` that makes what the row acts
// on afresh for each actor (an id to delete), and the status each actor must get. `mutates`: a success changes
// what the next actor would see, so the row runs in a world of its own, made again after each success.
import { beforeAll, describe, expect, it } from "vitest";
import type { WireSession } from "../helpers";
import { idpMetadataXml } from "../sso/saml-support/idp";
import { addMember, admin, createOrg, type Org, svc, user } from "./support";

const ACTORS = ["anonymous", "nonMember", "memberB", "ownerB", "memberA", "adminA", "ownerA"] as const;
type Actor = (typeof ACTORS)[number];

interface World {
  orgA: Org;
  orgB: Org;
  sessions: Record<Exclude<Actor, "anonymous">, WireSession>;
}

interface RouteCase {
  name: string;
  method: string;
  /** `extra`: what `setup` made for this actor. */
  path: (w: World, extra: Record<string, string>) => string;
  body?: (w: World, actor: Actor, extra: Record<string, string>) => unknown;
  setup?: (w: World) => Promise<Record<string, string>>;
  mutates?: boolean;
  expect: Record<Actor, number>;
}

/** Who gets what: owners and admins manage, members read, everyone else learns nothing. */
const READ = {
  anonymous: 401,
  nonMember: 404,
  memberB: 404,
  ownerB: 404,
  memberA: 200,
  adminA: 200,
  ownerA: 200,
};
const MANAGE = { ...READ, memberA: 403 };
const MANAGE_204 = { ...MANAGE, adminA: 204, ownerA: 204 };
const NOBODY_404 = { ...READ, memberA: 404, adminA: 404, ownerA: 404 };
const ADMIN_API = Object.fromEntries(ACTORS.map((actor) => [actor, 401])) as Record<Actor, number>;

/** An extra member of A to remove, and a pending invitation of A, made through the admin API. */
async function extraMemberOfA(w: World) {
  const extra = await user("extra");
  await addMember(w.orgA, extra, "member");
  return { userId: extra.user.id };
}
async function invitationOfA(w: World) {
  const response = await admin("POST", `/orgs/${w.orgA.id}/invitations`, {
    email: `invited-${crypto.randomUUID().slice(0, 8)}@example.com`,
    role: "member",
  });
  return { invitationId: ((await response.json()) as { id: string }).id };
}

/** What only the owner may do: `ok` for them, 403 for A's other members, nothing for anyone else. */
const OWNER = (ok: number) => ({ ...MANAGE, adminA: 403, ownerA: ok });

/** A SAML connection, a claimed domain and a SCIM token of A, made through the admin API. */
async function connectionOfA(w: World) {
  // An org keeps at most 20 connections: the ones earlier rows made go first.
  const listed = await admin("GET", `/orgs/${w.orgA.id}/connections`);
  for (const { id } of ((await listed.json()) as { items: { id: string }[] }).items) {
    expect((await admin("DELETE", `/orgs/${w.orgA.id}/connections/${id}`)).status).toBe(204);
  }
  const response = await admin("POST", `/orgs/${w.orgA.id}/connections`, {
    type: "saml",
    metadataXml: idpMetadataXml(),
  });
  expect(response.status).toBe(201);
  return { connectionId: ((await response.json()) as { id: string }).id };
}
async function domainOfA(w: World) {
  const domain = `a-${crypto.randomUUID().slice(0, 8)}.test`;
  expect((await admin("POST", `/orgs/${w.orgA.id}/domains`, { domain })).status).toBe(201);
  return { domain };
}
async function scimTokenOfA(w: World) {
  const response = await admin("POST", `/orgs/${w.orgA.id}/scim-tokens`, { name: "setup" });
  return { tokenId: ((await response.json()) as { id: string }).id };
}

const ROUTES: RouteCase[] = [
  { name: "read the org", method: "GET", path: (w) => `/orgs/${w.orgA.id}`, expect: READ },
  {
    name: "change the org",
    method: "PATCH",
    path: (w) => `/orgs/${w.orgA.id}`,
    body: () => ({ name: "Taken over" }),
    expect: MANAGE,
  },
  {
    name: "delete the org",
    method: "DELETE",
    path: (w) => `/orgs/${w.orgA.id}`,
    mutates: true,
    expect: { ...MANAGE, adminA: 403, ownerA: 204 },
  },
  { name: "list members", method: "GET", path: (w) => `/orgs/${w.orgA.id}/members`, expect: READ },
  {
    name: "change a member's role",
    method: "PATCH",
    path: (w) => `/orgs/${w.orgA.id}/members/${w.sessions.memberA.user.id}`,
    body: () => ({ role: "admin" }),
    mutates: true,
    expect: MANAGE,
  },
  {
    name: "promote oneself to owner",
    method: "PATCH",
    path: (w) => `/orgs/${w.orgA.id}/members/${w.sessions.adminA.user.id}`,
    body: () => ({ role: "owner" }),
    mutates: true,
    expect: { ...MANAGE, adminA: 403 },
  },
  {
    name: "remove a member",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgA.id}/members/${x.userId}`,
    setup: extraMemberOfA,
    expect: MANAGE_204,
  },
  {
    name: "remove the last owner",
    method: "DELETE",
    path: (w) => `/orgs/${w.orgA.id}/members/${w.sessions.ownerA.user.id}`,
    expect: { ...MANAGE, adminA: 403, ownerA: 409 },
  },
  {
    name: "invite",
    method: "POST",
    path: (w) => `/orgs/${w.orgA.id}/invitations`,
    body: () => ({ email: `x-${crypto.randomUUID().slice(0, 8)}@example.com`, role: "member" }),
    expect: { ...MANAGE, adminA: 201, ownerA: 201 },
  },
  { name: "list invitations", method: "GET", path: (w) => `/orgs/${w.orgA.id}/invitations`, expect: MANAGE },
  {
    name: "withdraw an invitation",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgA.id}/invitations/${x.invitationId}`,
    setup: invitationOfA,
    expect: MANAGE_204,
  },
  // Ids of A's rows through B's paths: a route that forgot to scope its query by org would answer these.
  {
    name: "withdraw A's invitation through B's path",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgB.id}/invitations/${x.invitationId}`,
    setup: invitationOfA,
    expect: { ...NOBODY_404, memberB: 403, ownerB: 404 },
  },
  {
    name: "change A's member through B's path",
    method: "PATCH",
    path: (w) => `/orgs/${w.orgB.id}/members/${w.sessions.memberA.user.id}`,
    body: () => ({ role: "admin" }),
    expect: { ...NOBODY_404, memberB: 403, ownerB: 404 },
  },
  {
    name: "switch a session into the org",
    method: "POST",
    path: () => "/token",
    body: (w, actor) => ({
      refreshToken: actor === "anonymous" ? crypto.randomUUID() : w.sessions[actor].refreshToken,
      orgId: w.orgA.id,
    }),
    expect: {
      anonymous: 401,
      nonMember: 403,
      memberB: 403,
      ownerB: 403,
      memberA: 200,
      adminA: 200,
      ownerA: 200,
    },
  },
  // Enterprise sign-in's settings (src/sso/org-routes.ts) and SCIM tokens (src/scim/token-routes.ts): the org's
  // owners only. Threat: an admin or member of A, or anyone of B, adding an IdP that then signs A's people in, or
  // minting a SCIM token that provisions them.
  {
    name: "list connections",
    method: "GET",
    path: (w) => `/orgs/${w.orgA.id}/connections`,
    expect: OWNER(200),
  },
  {
    name: "add a connection",
    method: "POST",
    path: (w) => `/orgs/${w.orgA.id}/connections`,
    body: () => ({ type: "saml", metadataXml: idpMetadataXml() }),
    expect: OWNER(201),
  },
  {
    name: "read a connection",
    method: "GET",
    path: (w, x) => `/orgs/${w.orgA.id}/connections/${x.connectionId}`,
    setup: connectionOfA,
    expect: OWNER(200),
  },
  {
    name: "change a connection",
    method: "PATCH",
    path: (w, x) => `/orgs/${w.orgA.id}/connections/${x.connectionId}`,
    body: () => ({ defaultRole: "admin" }),
    setup: connectionOfA,
    expect: OWNER(200),
  },
  {
    name: "remove a connection",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgA.id}/connections/${x.connectionId}`,
    setup: connectionOfA,
    expect: OWNER(204),
  },
  {
    name: "read A's connection through B's path",
    method: "GET",
    path: (w, x) => `/orgs/${w.orgB.id}/connections/${x.connectionId}`,
    setup: connectionOfA,
    expect: { ...NOBODY_404, memberB: 403, ownerB: 404 },
  },
  { name: "list domains", method: "GET", path: (w) => `/orgs/${w.orgA.id}/domains`, expect: OWNER(200) },
  {
    name: "claim a domain",
    method: "POST",
    path: (w) => `/orgs/${w.orgA.id}/domains`,
    body: () => ({ domain: `a-${crypto.randomUUID().slice(0, 8)}.test` }),
    expect: OWNER(201),
  },
  {
    name: "remove a domain",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgA.id}/domains/${x.domain}`,
    setup: domainOfA,
    expect: OWNER(204),
  },
  {
    name: "remove A's domain through B's path",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgB.id}/domains/${x.domain}`,
    setup: domainOfA,
    expect: { ...NOBODY_404, memberB: 403, ownerB: 404 },
  },
  {
    name: "enforce SSO (off)",
    method: "PATCH",
    path: (w) => `/orgs/${w.orgA.id}/sso`,
    body: () => ({ enforce: false }),
    expect: OWNER(200),
  },
  {
    name: "create a SCIM token",
    method: "POST",
    path: (w) => `/orgs/${w.orgA.id}/scim-tokens`,
    body: () => ({ name: "okta" }),
    expect: OWNER(201),
  },
  {
    name: "list SCIM tokens",
    method: "GET",
    path: (w) => `/orgs/${w.orgA.id}/scim-tokens`,
    expect: OWNER(200),
  },
  {
    name: "revoke a SCIM token",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgA.id}/scim-tokens/${x.tokenId}`,
    setup: scimTokenOfA,
    expect: OWNER(204),
  },
  {
    name: "revoke A's SCIM token through B's path",
    method: "DELETE",
    path: (w, x) => `/orgs/${w.orgB.id}/scim-tokens/${x.tokenId}`,
    setup: scimTokenOfA,
    expect: { ...NOBODY_404, memberB: 403, ownerB: 404 },
  },
  // A user's bearer is not the admin secret, whatever the user's role.
  {
    name: "admin API: read the org",
    method: "GET",
    path: (w) => `/admin/orgs/${w.orgA.id}`,
    expect: ADMIN_API,
  },
  {
    name: "admin API: add a member",
    method: "POST",
    path: (w) => `/admin/orgs/${w.orgA.id}/members`,
    body: (w) => ({ userId: w.sessions.nonMember.user.id, role: "owner" }),
    expect: ADMIN_API,
  },
];

async function makeWorld(): Promise<World> {
  const [ownerA, adminA, memberA, ownerB, memberB, nonMember] = await Promise.all(
    ["owner-a", "admin-a", "member-a", "owner-b", "member-b", "non-member"].map((tag) => user(tag)),
  );
  const [orgA, orgB] = [await createOrg(ownerA!, "Org A"), await createOrg(ownerB!, "Org B")];
  await addMember(orgA, adminA!, "admin");
  await addMember(orgA, memberA!, "member");
  await addMember(orgB, memberB!, "member");
  return {
    orgA,
    orgB,
    sessions: {
      ownerA: ownerA!,
      adminA: adminA!,
      memberA: memberA!,
      ownerB: ownerB!,
      memberB: memberB!,
      nonMember: nonMember!,
    },
  };
}

describe("organization boundaries: every org route × every caller", () => {
  let shared: World;
  beforeAll(async () => {
    shared = await makeWorld();
  }, 60_000);

  for (const route of ROUTES) {
    it(`${route.method} ${route.name}`, async () => {
      let world = route.mutates ? await makeWorld() : shared;
      const got: Partial<Record<Actor, number>> = {};
      for (const actor of ACTORS) {
        const extra = route.setup ? await route.setup(world) : {};
        const response = await svc.request(route.method, route.path(world, extra), {
          token: actor === "anonymous" ? undefined : world.sessions[actor].accessToken,
          json: route.body?.(world, actor, extra),
        });
        got[actor] = response.status;
        if (response.status >= 400) {
          // Every refusal in the contract's error shape, never a 5xx.
          const body = (await response.json()) as { status: number };
          expect(body.status).toBe(response.status);
        }
        if (route.mutates && response.ok && actor !== ACTORS.at(-1)) world = await makeWorld();
      }
      expect(got).toEqual(route.expect);
      // Each world is seven sign-ups: generous under a loaded machine.
    }, 60_000);
  }
});
