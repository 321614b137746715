import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import type { PublicKeyCredentialRequestOptionsJSON } from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { totpCode, totpStep } from "../../src/auth/mfa/totp";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import {
  expectError,
  mailbox,
  PASSWORD,
  signUp,
  type TestService,
  uniqueEmail,
  verifyPath,
} from "../helpers";
import { userD1 } from "../support/shards";
import {
  ADMIN,
  oidcConnection,
  orgWithDomain,
  personAtIdp,
  ssoService,
  ssoSignIn,
  type TestOrg,
  uniqueDomain,
} from "./support";

/**
 * Enforced SSO (contract organizations.md §2): once an org enforces it, the emails of its verified domains sign in
 * only through its IdP. Threat: an employee's password (or a link, a code, a passkey) outliving the company's control
 * of the account — offboarding at the IdP must be the end of access.
 */

const svc = ssoService({
  AUTH_MFA_ENABLED: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
});

const enforce = (org: TestOrg, enforce: boolean, token = org.owner.accessToken) =>
  svc.request("PATCH", `/orgs/${org.orgId}/sso`, { json: { enforce }, token });

async function enforcedOrg() {
  const org = await orgWithDomain(svc);
  await oidcConnection(svc, org);
  return org;
}

async function expectSsoRequired(response: Response) {
  const { message } = await expectError(response, 403, "sso-required");
  expect(message).toContain("/sso/start");
}

async function passkeyUser(service: TestService, email: string) {
  const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
  const options = await (await service.post("/signup/webauthn", { email })).json();
  const credential = await device.create(options as never, { alg: "ES256", attestation: "none" });
  const verified = await service.post("/signup/webauthn/verify", { credential, nickname: "key" });
  expect(verified.status).toBe(200);
  return device;
}

describe("enforced SSO", () => {
  it("refuses password, magic-link, email-code and passkey sign-ins of the domain's emails, with the start URL", async () => {
    const org = await enforcedOrg();
    const email = `pat@${org.domain}`;
    await signUp(svc, email);
    const passkeyEmail = `key@${org.domain}`;
    const device = await passkeyUser(svc, passkeyEmail);
    expect((await enforce(org, true)).status).toBe(200);

    await expectSsoRequired(await svc.post("/signin/email-password", { email, password: PASSWORD }));
    // Threat: a password oracle. A wrong password, and an address with no account, get the same answer as the right
    // password: the endpoint tells nothing about the credentials of an account that can no longer use them.
    await expectSsoRequired(
      await svc.post("/signin/email-password", { email, password: "not the password at all" }),
    );
    await expectSsoRequired(
      await svc.post("/signin/email-password", { email: `nobody@${org.domain}`, password: PASSWORD }),
    );
    await expectSsoRequired(await svc.post("/signin/passwordless/email", { email }));
    await expectSsoRequired(await svc.post("/signin/otp/email", { email }));
    const options = (await (
      await svc.post("/signin/webauthn", { email: passkeyEmail })
    ).json()) as PublicKeyCredentialRequestOptionsJSON;
    await expectSsoRequired(
      await svc.post("/signin/webauthn/verify", { credential: await device.get(options) }),
    );

    // Other domains are untouched.
    const other = uniqueEmail("free");
    await signUp(svc, other);
    expect((await svc.post("/signin/email-password", { email: other, password: PASSWORD })).status).toBe(200);
    // And switched off again, the password works again.
    expect((await enforce(org, false)).status).toBe(200);
    expect((await svc.post("/signin/email-password", { email, password: PASSWORD })).status).toBe(200);
  });

  // Threat: a magic link mailed before enforcement, used after it.
  it("a link mailed before enforcement signs in no one after it", async () => {
    const org = await enforcedOrg();
    const email = `link@${org.domain}`;
    expect((await svc.post("/signin/passwordless/email", { email })).status).toBe(200);
    const [mail] = await mailbox(svc, email);
    expect((await enforce(org, true)).status).toBe(200);
    const landed = await svc.get(verifyPath(mail!));
    expect(landed.status).toBe(302);
    const query = new URL(landed.headers.get("location")!).searchParams;
    expect(query.get("refreshToken")).toBeNull();
    expect(query.get("error")).toBe("sso-required");
  });

  it("ends existing password sessions when it begins (their next refresh fails); sessions from the IdP keep refreshing", async () => {
    const org = await enforcedOrg();
    const email = `old@${org.domain}`;
    const before = await signUp(svc, email);
    const ssoEmail = `new@${org.domain}`;
    await personAtIdp({ email: ssoEmail });
    const viaIdp = (await ssoSignIn(svc, ssoEmail)).get("refreshToken")!;
    const elsewhere = await signUp(svc, uniqueEmail("elsewhere"));
    expect((await enforce(org, true)).status).toBe(200);

    await expectError(
      await svc.post("/token", { refreshToken: before.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    expect((await svc.post("/token", { refreshToken: viaIdp })).status).toBe(200);
    expect((await svc.post("/token", { refreshToken: elsewhere.refreshToken })).status).toBe(200);
  });

  // Threat: a domain verified after enforcement began bringing its old password sessions along.
  it("ends them too for a domain verified while the org enforces SSO", async () => {
    const org = await enforcedOrg();
    expect((await enforce(org, true)).status).toBe(200);
    const later = uniqueDomain("later");
    const session = await signUp(svc, `late@${later}`);
    expect(
      (await svc.post(`/orgs/${org.orgId}/domains`, { domain: later }, org.owner.accessToken)).status,
    ).toBe(201);
    const verified = await svc.request("POST", `/admin/orgs/${org.orgId}/domains/${later}/verify`, {
      headers: ADMIN,
    });
    expect(verified.status).toBe(200);
    await expectError(
      await svc.post("/token", { refreshToken: session.refreshToken }),
      401,
      "invalid-refresh-token",
    );
    await expectSsoRequired(
      await svc.post("/signin/email-password", { email: `late@${later}`, password: PASSWORD }),
    );
  });

  // Threat: a password (first factor) slipping through by way of the TOTP step; and the other way round, an
  // enterprise sign-in of a user with TOTP must still finish.
  it("refuses a password before its TOTP ticket; an IdP sign-in of a TOTP user finishes with the code", async () => {
    const org = await enforcedOrg();
    const email = `two@${org.domain}`;
    const session = await signUp(svc, email);
    const { totpSecret } = (await (await svc.get("/mfa/totp/generate", session.accessToken)).json()) as {
      totpSecret: string;
    };
    const secret = decodeBase32IgnorePadding(totpSecret);
    const code = () => totpCode(secret, totpStep(Date.now()));
    expect(
      (await svc.post("/user/mfa", { code: code(), activeMfaType: "totp" }, session.accessToken)).status,
    ).toBe(200);
    // A proven address (an unproven one is wiped at the IdP's first proof: account pre-hijacking), and a code that
    // may be used again at once (as 30 seconds of waiting would allow).
    await userD1(session.user.id)
      .prepare("UPDATE users SET totp_last_step = NULL, email_verified = 1 WHERE id = ?")
      .bind(session.user.id)
      .run();
    expect((await enforce(org, true)).status).toBe(200);

    await expectSsoRequired(await svc.post("/signin/email-password", { email, password: PASSWORD }));
    await personAtIdp({ email });
    const back = await ssoSignIn(svc, email);
    expect(back.get("refreshToken")).toBeNull();
    const ticket = back.get("mfaTicket")!;
    expect(ticket).toMatch(/^mfaTotp:/);
    const finished = await svc.post("/signin/mfa/totp", { ticket, otp: code() });
    expect(finished.status).toBe(200);
  });

  it("is the owner's to switch, and needs an enabled connection", async () => {
    const org = await orgWithDomain(svc);
    await expectError(await enforce(org, true), 400, "invalid-request");
    await oidcConnection(svc, org);
    const stranger = await signUp(svc, uniqueEmail("stranger"));
    await expectError(await enforce(org, true, stranger.accessToken), 404, "not-found");
    expect(await (await enforce(org, true)).json()).toEqual({ orgId: org.orgId, enforceSso: true });
  });
});
