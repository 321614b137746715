// Switching a session into an organization through `POST /token {refreshToken, orgId}` (contract organizations.md
// §1) and the claims that carry it: `org_id` at the top level, `x-hasura-org-id` and `x-hasura-org-role` in the
// Hasura namespace. A removal, a deactivation or the org's deletion shows at the next refresh. The threat named above
// a test is what it keeps out.

import { env } from "cloudflare:test";
import { createClient } from "@nhost/nhost-js";
import type { ChainFunction } from "@nhost/nhost-js/fetch";
import { MemoryStorage } from "@nhost/nhost-js/session";
import { describe, expect, it } from "vitest";
import { expectContractError, expectError, PASSWORD, PREFIX, SERVER, type WireSession } from "../helpers";
import { userD1 } from "../support/shards";
import { addMember, as, createOrg, orgClaims, refresh, svc, user } from "./support";

async function sessionOrgId(session: WireSession): Promise<string | null> {
  const row = await userD1(session.user.id)
    .prepare("SELECT org_id FROM sessions WHERE id = ?")
    .bind(session.refreshTokenId)
    .first<{ org_id: string | null }>();
  return row!.org_id;
}

const NO_ORG = { orgId: undefined, hasuraOrgId: undefined, hasuraOrgRole: undefined };

describe("switching organizations", () => {
  it("rotates the same family into the org, keeps it on a plain refresh, and clears it with null", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    expect(orgClaims(owner.accessToken)).toEqual(NO_ORG);
    const switched = await refresh(owner, org.id);
    expect(switched.refreshTokenId).toBe(owner.refreshTokenId);
    expect(switched.refreshToken).not.toBe(owner.refreshToken);
    expect(orgClaims(switched.accessToken)).toEqual({
      orgId: org.id,
      hasuraOrgId: org.id,
      hasuraOrgRole: "owner",
    });
    expect(await sessionOrgId(switched)).toBe(org.id);
    // The old token is spent, as in any rotation (past the grace window it would be a replay).
    const kept = await refresh(switched);
    expect(orgClaims(kept.accessToken)).toEqual({
      orgId: org.id,
      hasuraOrgId: org.id,
      hasuraOrgRole: "owner",
    });
    const cleared = await refresh(kept, null);
    expect(orgClaims(cleared.accessToken)).toEqual(NO_ORG);
    expect(await sessionOrgId(cleared)).toBeNull();
    expect(orgClaims((await refresh(cleared)).accessToken)).toEqual(NO_ORG);
  });

  // Threat: a user minting tokens for a workspace they don't belong to (another tenant's data behind Hasura's
  // `x-hasura-org-id` permission), and a refused switch costing the client its session.
  it("refuses an org the user is no member of, with the refresh token unspent", async () => {
    const [owner, outsider] = [await user(), await user()];
    const org = await createOrg(owner);
    for (const orgId of [org.id, crypto.randomUUID()]) {
      await expectError(
        await svc.post("/token", { refreshToken: outsider.refreshToken, orgId }),
        403,
        "not-org-member",
      );
    }
    // Still the current token: a plain refresh with it works, and is not a replay.
    const renewed = await refresh(outsider);
    expect(orgClaims(renewed.accessToken)).toEqual(NO_ORG);
  });

  it("refuses bad orgId values in the contract's shape", async () => {
    const member = await user();
    for (const orgId of ["", 42, "x".repeat(101), { id: "x" }]) {
      await expectContractError(
        await svc.post("/token", { refreshToken: member.refreshToken, orgId }),
        JSON.stringify(orgId).slice(0, 30),
      );
    }
    expect((await refresh(member)).refreshTokenId).toBe(member.refreshTokenId);
  });

  it("carries a changed role from the next refresh", async () => {
    const [owner, member] = [await user(), await user()];
    const org = await createOrg(owner);
    await addMember(org, member, "member");
    const inOrg = await refresh(member, org.id);
    expect(orgClaims(inOrg.accessToken).hasuraOrgRole).toBe("member");
    await as(owner.accessToken, "PATCH", `/orgs/${org.id}/members/${member.user.id}`, { role: "admin" });
    expect(orgClaims((await refresh(inOrg)).accessToken).hasuraOrgRole).toBe("admin");
  });
});

describe("the org leaves the token at the next refresh", () => {
  // Threat: a removed employee keeping access to the workspace for as long as their session lives.
  it("after the member's removal, and the session row forgets it", async () => {
    const [owner, member] = [await user(), await user()];
    const org = await createOrg(owner);
    await addMember(org, member, "member");
    const inOrg = await refresh(member, org.id);
    expect((await as(owner.accessToken, "DELETE", `/orgs/${org.id}/members/${member.user.id}`)).status).toBe(
      204,
    );
    const after = await refresh(inOrg);
    expect(orgClaims(after.accessToken)).toEqual(NO_ORG);
    await expect.poll(() => sessionOrgId(after)).toBeNull();
    // Rejoining does not bring it back by itself: the session was moved out.
    await addMember(org, member, "member");
    expect(orgClaims((await refresh(after)).accessToken)).toEqual(NO_ORG);
  });

  it("after a deactivation (SCIM's active: false), and no switch back in", async () => {
    const [owner, member] = [await user(), await user()];
    const org = await createOrg(owner);
    await addMember(org, member, "member");
    const inOrg = await refresh(member, org.id);
    await env.DB.prepare("UPDATE org_members SET active = 0 WHERE org_id = ? AND user_id = ?")
      .bind(org.id, member.user.id)
      .run();
    const after = await refresh(inOrg);
    expect(orgClaims(after.accessToken)).toEqual(NO_ORG);
    await expectError(
      await svc.post("/token", { refreshToken: after.refreshToken, orgId: org.id }),
      403,
      "not-org-member",
    );
  });

  it("after the org's deletion", async () => {
    const owner = await user();
    const org = await createOrg(owner);
    const inOrg = await refresh(owner, org.id);
    expect((await as(inOrg.accessToken, "DELETE", `/orgs/${org.id}`)).status).toBe(204);
    expect(orgClaims((await refresh(inOrg)).accessToken)).toEqual(NO_ORG);
  });
});

describe("@nhost/nhost-js", () => {
  it("keeps refreshing a session switched into an org, which keeps its claims", async () => {
    const member = await user();
    const org = await createOrg(member);
    const toService: ChainFunction = () => (url, init) =>
      svc.request(init?.method ?? "GET", url, {
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        body: init?.body as BodyInit | undefined,
      });
    const nhost = createClient({
      authUrl: `${SERVER}${PREFIX}`,
      storageUrl: `${SERVER}/storage/v1`,
      storage: new MemoryStorage(),
      configure: [({ auth }) => auth.pushChainFunction(toService)],
    });
    await nhost.auth.signInEmailPassword({ email: member.user.email, password: PASSWORD });
    const stored = nhost.getUserSession()!;
    // The extra field travels in the SDK's own refresh call; the client stores the answer as any refresh.
    await nhost.auth.refreshToken({ refreshToken: stored.refreshToken, orgId: org.id } as never);
    const switched = nhost.getUserSession()!;
    expect(switched.decodedToken["https://hasura.io/jwt/claims"]?.["x-hasura-org-id"]).toBe(org.id);
    const renewed = await nhost.refreshSession(3600);
    expect(renewed!.refreshTokenId).toBe(stored.refreshTokenId);
    expect(orgClaims(renewed!.accessToken)).toEqual({
      orgId: org.id,
      hasuraOrgId: org.id,
      hasuraOrgRole: "owner",
    });
  });
});
