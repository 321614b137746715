// Organizations as an app and its customer's IT meet them, against `wrangler dev`: @nhost/nhost-js for the user's
// sessions (sign-in, the switch into an org through its own refresh call, the claims it decodes), plain HTTP for the
// routes nhost-js has no method for, a real OIDC provider (oidc-provider, test/fakes/oidc-idp.ts) and a real SAML
// IdP (samlify, test/sso/saml-support/idp.ts) on the other side of the enterprise sign-ins, SCIM as Entra ID and
// Okta send it.
import { describe, expect, inject, it } from "vitest";
import { idpMetadataXml, signedResponse, toBase64 } from "../sso/saml-support/idp";
import { authUrl, client, latestMail, PASSWORD, turnstileToken, verifiedUser } from "./client";

const IDP = inject("oidcIdpUrl");
const ADMIN = { "x-hasura-admin-secret": inject("adminSecret") };
const APP = "https://app.example.com/after";
const HASURA = "https://hasura.io/jwt/claims";

async function call(
  method: string,
  path: string,
  options: { token?: string; json?: unknown; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers["content-type"] = "application/json";
  return fetch(`${authUrl}${path}`, {
    method,
    headers,
    body: options.json === undefined ? undefined : JSON.stringify(options.json),
    redirect: "manual",
  });
}

async function ok<T>(response: Response, status = 200): Promise<T> {
  expect(response.status, await response.clone().text()).toBe(status);
  return (status === 204 ? undefined : await response.json()) as T;
}

/** A verified user signed in through nhost-js: the client holds the session. */
async function signedIn(tag: string) {
  const { email } = await verifiedUser(tag);
  const nhost = client();
  await nhost.auth.signInEmailPassword({ email, password: PASSWORD });
  return { email, nhost, token: () => nhost.getUserSession()!.accessToken };
}

/** An org owned by a fresh user, with a domain verified through the admin API (no DNS on loopback). */
async function orgWithDomain(tag: string) {
  const owner = await signedIn(`${tag}-owner`);
  const org = await ok<{ id: string; slug: string }>(
    await call("POST", "/orgs", { token: owner.token(), json: { name: `${tag} Inc` } }),
    201,
  );
  const domain = `${tag}-${crypto.randomUUID().slice(0, 8)}.test`;
  await ok(await call("POST", `/orgs/${org.id}/domains`, { token: owner.token(), json: { domain } }), 201);
  await ok(await call("POST", `/admin/orgs/${org.id}/domains/${domain}/verify`, { headers: ADMIN }));
  return { owner, orgId: org.id, domain };
}

const cookiesOf = (response: Response) =>
  response.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");

async function idp(path: string, body: unknown) {
  const response = await fetch(`${IDP}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.ok).toBe(true);
}

/** `POST /sso/start` by email, as the built-in page does: the IdP's URL and the browser's binding cookie. */
async function startSso(email: string) {
  const started = await call("POST", "/sso/start", { json: { email, redirectTo: APP } });
  const { url } = await ok<{ url: string }>(started);
  return { url: new URL(url), cookie: cookiesOf(started) };
}

/** The app's landing after an enterprise sign-in: the refresh token nhost-js exchanges for a session. */
function landing(response: Response): string {
  expect(response.status).toBe(302);
  const location = new URL(response.headers.get("location")!);
  expect(`${location.origin}${location.pathname}`).toBe(APP);
  expect(location.searchParams.get("error"), location.searchParams.get("errorDescription") ?? "").toBeNull();
  return location.searchParams.get("refreshToken")!;
}

describe("organizations with @nhost/nhost-js", () => {
  it("an owner invites a member, who accepts and switches their session into the org; its claims follow them", async () => {
    const owner = await signedIn("org-owner");
    const org = await ok<{ id: string }>(
      await call("POST", "/orgs", { token: owner.token(), json: { name: "Compat Org" } }),
      201,
    );
    const member = await signedIn("org-member");
    await ok(
      await call("POST", `/orgs/${org.id}/invitations`, {
        token: owner.token(),
        json: { email: member.email, role: "admin" },
      }),
      201,
    );
    const mail = await latestMail(member.email);
    const ticket = /[?&]ticket=([^&\s]+)/.exec(mail.text)![1]!;
    await ok(
      await call("POST", "/orgs/invitations/accept", {
        token: member.token(),
        json: { ticket: decodeURIComponent(ticket) },
      }),
    );
    const mine = await ok<{ items: { id: string; role: string }[] }>(
      await call("GET", "/orgs", { token: member.token() }),
    );
    expect(mine.items).toEqual([expect.objectContaining({ id: org.id, role: "admin" })]);

    // The switch is nhost-js's own refresh call with one more field; the client keeps the session it answers.
    const session = member.nhost.getUserSession()!;
    await member.nhost.auth.refreshToken({ refreshToken: session.refreshToken, orgId: org.id } as never);
    const switched = member.nhost.getUserSession()!;
    expect(switched.decodedToken[HASURA]).toMatchObject({
      "x-hasura-org-id": org.id,
      "x-hasura-org-role": "admin",
    });
    expect((switched.decodedToken as unknown as { org_id: string }).org_id).toBe(org.id);

    // A plain refresh keeps the org; once the owner removes the member, the next one comes back without it.
    await member.nhost.refreshSession(0);
    expect(member.nhost.getUserSession()!.decodedToken[HASURA]?.["x-hasura-org-id"]).toBe(org.id);
    const userId = switched.user!.id;
    await ok(await call("DELETE", `/orgs/${org.id}/members/${userId}`, { token: owner.token() }), 204);
    await member.nhost.refreshSession(0);
    const after = member.nhost.getUserSession()!;
    expect(after.decodedToken[HASURA]?.["x-hasura-org-id"]).toBeUndefined();
    expect((after.decodedToken as unknown as { org_id?: string }).org_id).toBeUndefined();
  });

  it("an enterprise OIDC sign-in routed by the email's domain makes the member just in time", async () => {
    const { owner, orgId, domain } = await orgWithDomain("oidc");
    const clientId = `compat-${crypto.randomUUID().slice(0, 8)}`;
    const connection = await ok<{ id: string; oidc: { redirectUri: string } }>(
      await call("POST", `/orgs/${orgId}/connections`, {
        token: owner.token(),
        json: { type: "oidc", issuer: IDP, clientId, clientSecret: "compat secret" },
      }),
      201,
    );
    await idp("/__clients", {
      client_id: clientId,
      client_secret: "compat secret",
      redirect_uris: [connection.oidc.redirectUri],
    });
    const email = `jane@${domain}`;
    const sub = `sub-${crypto.randomUUID()}`;
    await idp("/__accounts", { sub, email, email_verified: true, name: "Jane Enterprise" });

    const { url, cookie } = await startSso(email);
    const drive = await fetch(`${IDP}/__drive?${new URLSearchParams({ url: url.href, as: sub })}`);
    const { location } = (await drive.json()) as { location: string };
    const refreshToken = landing(await fetch(location, { redirect: "manual", headers: { cookie } }));

    const nhost = client();
    await nhost.auth.refreshToken({ refreshToken });
    expect(nhost.getUserSession()!.user).toMatchObject({
      email,
      displayName: "Jane Enterprise",
      emailVerified: true,
    });
    const members = await ok<{ items: { userId: string; role: string }[] }>(
      await call("GET", `/orgs/${orgId}/members`, { token: owner.token() }),
    );
    expect(members.items).toContainEqual(
      expect.objectContaining({ userId: nhost.getUserSession()!.user!.id, role: "member" }),
    );
  });

  it("a SAML sign-in routed by the email's domain, its signed response checked, makes the member just in time", async () => {
    const { owner, orgId, domain } = await orgWithDomain("saml");
    const connection = await ok<{ id: string; saml: { spMetadataUrl: string; acsUrl: string } }>(
      await call("POST", `/orgs/${orgId}/connections`, {
        token: owner.token(),
        json: { type: "saml", metadataXml: idpMetadataXml() },
      }),
      201,
    );
    const email = `sam@${domain}`;
    const { url, cookie } = await startSso(email);
    const request = await new Response(
      new Blob([Uint8Array.from(atob(url.searchParams.get("SAMLRequest")!), (c) => c.charCodeAt(0))])
        .stream()
        .pipeThrough(new DecompressionStream("deflate-raw")),
    ).text();
    const requestId = /\sID="([^"]+)"/.exec(request)![1]!;
    const xml = await signedResponse({
      spEntityId: connection.saml.spMetadataUrl,
      acsUrl: connection.saml.acsUrl,
      nameId: email,
      inResponseTo: requestId,
    });
    // The IdP's page posts the form cross-site: no cookie rides along; the ACS bounces the browser to its own GET.
    const acs = await fetch(connection.saml.acsUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ SAMLResponse: toBase64(xml) }),
      redirect: "manual",
    });
    expect(acs.status).toBe(303);
    const bounce = acs.headers.get("location")!;
    expect(bounce).not.toContain("SAMLResponse");
    const refreshToken = landing(await fetch(bounce, { redirect: "manual", headers: { cookie } }));

    const nhost = client();
    await nhost.auth.refreshToken({ refreshToken });
    expect(nhost.getUserSession()!.user?.email).toBe(email);
    const members = await ok<{ items: { userId: string }[] }>(
      await call("GET", `/orgs/${orgId}/members`, { token: owner.token() }),
    );
    expect(members.items.map((m) => m.userId)).toContain(nhost.getUserSession()!.user!.id);
  });

  it("SCIM creates, patches and deactivates; the deactivation ends the user's session in the org at once", async () => {
    const { owner, orgId, domain } = await orgWithDomain("scim");
    const { token } = await ok<{ token: string }>(
      await call("POST", `/orgs/${orgId}/scim-tokens`, { token: owner.token(), json: { name: "Entra ID" } }),
      201,
    );
    const scim = (method: string, path: string, json?: unknown) =>
      call(method, `/scim/v2${path}`, {
        token,
        json,
        headers: json === undefined ? {} : { "content-type": "application/scim+json" },
      });

    // Created by SCIM, then given a password by the person through the reset mail, as a new hire would.
    const email = `new.hire@${domain}`;
    const created = await ok<{ id: string; active: boolean }>(
      await scim("POST", "/Users", {
        schemas: ["urn:ietf:params:scim:schemas:core:2.0:User"],
        userName: email,
        externalId: `ext-${crypto.randomUUID().slice(0, 8)}`,
        name: { givenName: "New", familyName: "Hire" },
        emails: [{ value: email, type: "work", primary: true }],
        active: true,
      }),
      201,
    );
    expect(created.active).toBe(true);
    const found = await ok<{ totalResults: number; Resources: { id: string }[] }>(
      await scim("GET", `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`),
    );
    expect(found.Resources.map((r) => r.id)).toEqual([created.id]);
    const patched = await ok<{ name: { givenName: string } }>(
      await scim("PATCH", `/Users/${created.id}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", path: "name.givenName", value: "Renamed" }],
      }),
    );
    expect(patched.name.givenName).toBe("Renamed");

    await ok(
      await call("POST", "/user/password/reset", {
        json: { email, options: { redirectTo: APP } },
        // The compat server asks a Turnstile challenge of password resets (test/compat/wrangler-dev.ts).
        headers: { "x-cf-turnstile-response": turnstileToken("password-reset") },
      }),
    );
    const link = new URL(/(http\S+\/verify\?\S+)/.exec((await latestMail(email)).text)![1]!);
    const reset = await fetch(link, { redirect: "manual" });
    const nhost = client();
    await nhost.auth.refreshToken({
      refreshToken: new URL(reset.headers.get("location")!).searchParams.get("refreshToken")!,
    });
    await nhost.auth.changeUserPassword({ newPassword: PASSWORD });
    const inOrg = nhost.getUserSession()!;
    await nhost.auth.refreshToken({ refreshToken: inOrg.refreshToken, orgId } as never);
    expect(nhost.getUserSession()!.decodedToken[HASURA]?.["x-hasura-org-id"]).toBe(orgId);
    // A second session of the same person, not switched into the org.
    const outside = client();
    await outside.auth.signInEmailPassword({ email, password: PASSWORD });

    await ok(
      await scim("PATCH", `/Users/${created.id}`, {
        schemas: ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
        Operations: [{ op: "replace", value: { active: false } }],
      }),
    );
    const refused = await call("POST", "/token", {
      json: { refreshToken: nhost.getUserSession()!.refreshToken },
    });
    expect(refused.status).toBe(401);
    await outside.refreshSession(0);
    expect(outside.getUserSession()!.decodedToken[HASURA]?.["x-hasura-org-id"]).toBeUndefined();
  });
});
