// An MCP host connected into an organization (contract organizations.md §1): the MCP TypeScript SDK's `auth()`
// against `wrangler dev` and the example MCP server, the person completing the login step with the organization they
// let the host act in. The host's tokens carry `org_id`, refreshes keep it, and the MCP server accepts them. Threat
// covered: a host (or whoever holds the person's session) naming an organization the person is not a member of.
import type { OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { authUrl, verifiedUser } from "./client";
import { connect, HostProvider, mcpServer, whoami } from "./mcp-host";
import { pendingRequestOf } from "./relying-party";

/** The login step completed with the person's access token and the organization they picked (docs/oauth2.md §5). */
const completeInto = (requestId: string, accessToken: string, orgId: string) =>
  fetch(`${authUrl}/oauth2/login`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ requestId, orgId }),
  });

async function newOrg(accessToken: string, name: string): Promise<string> {
  const response = await fetch(`${authUrl}/orgs`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${accessToken}` },
    body: JSON.stringify({ name }),
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { id: string }).id;
}

describe("the MCP SDK consenting into an organization", () => {
  it("gets tokens carrying the org, keeps it across a refresh, and calls a tool with them", async () => {
    const person = await verifiedUser("mcp-org");
    const stranger = await verifiedUser("mcp-org-stranger");
    const orgId = await newOrg(person.accessToken, "Acme Agents");
    const foreignOrg = await newOrg(stranger.accessToken, "Not Yours");
    const host = new HostProvider("Compat MCP host (organization)");
    await connect(host, async (authorizationUrl) => {
      const requestId = await pendingRequestOf(authorizationUrl);
      const refused = await completeInto(requestId, person.accessToken, foreignOrg);
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: string }).error).toBe("not-org-member");

      const completed = await completeInto(requestId, person.accessToken, orgId);
      expect(completed.status).toBe(200);
      return new URL(((await completed.json()) as { redirectUri: string }).redirectUri);
    });
    const claims = decodeJwt(host.saved!.access_token);
    expect(claims).toMatchObject({ aud: mcpServer, org_id: orgId, sub: decodeJwt(person.accessToken).sub });

    // A refresh (as the SDK does when the access token expires) keeps the org.
    const refreshed = await fetch(`${authUrl}/oauth2/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: host.saved!.refresh_token!,
        client_id: host.information!.client_id,
      }),
    });
    expect(refreshed.status).toBe(200);
    host.saved = (await refreshed.json()) as OAuthTokens;
    expect(decodeJwt(host.saved!.access_token).org_id).toBe(orgId);

    expect(await whoami(host)).toMatchObject({ client_id: host.information!.client_id });
  });
});
