import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { LEVEL, levelOf, methodsOfSessionRow } from "../../../src/browser/acr";
import { SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";

/**
 * Issue 47, "Second factors beyond TOTP and SMS": a passkey as the second step after a password.
 * `POST /user/mfa {activeMfaType: "webauthn"}` (the user holds a passkey or security key); the first factor answers an
 * `mfaWebauthn:` ticket; `POST /signin/mfa/webauthn {ticket}` gives request options for the user's keys and
 * `/verify {ticket, credential}` the session, recorded `mfa-passkey` (phishing-resistant) only with user verification.
 */

const ON = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true", AUTH_WEBAUTHN_ENABLED: "true" };
const svc = service(ON);
const ORIGIN = "http://localhost:3000";

type SignInAnswer = { session: WireSession | null; mfa: { ticket: string } | null };
const passwordSignIn = async (s: typeof svc, email: string) =>
  (await (await s.post("/signin/email-password", { email, password: PASSWORD })).json()) as SignInAnswer;
const options = async (s: typeof svc, ticket: string) => {
  const answer = await s.post("/signin/mfa/webauthn", { ticket });
  expect(answer.status).toBe(200);
  return (await answer.json()) as PublicKeyCredentialRequestOptionsJSON;
};
const methodOf = async (session: WireSession) =>
  (
    await userD1(session.user.id)
      .prepare("SELECT method FROM sessions WHERE id = ?")
      .bind(session.refreshTokenId)
      .first<{ method: string }>()
  )?.method;

/** A user with a passkey (the API's own add), whose second step is a key. */
async function keyStepUser(s: typeof svc, tag: string) {
  const email = uniqueEmail(tag);
  const session = await signUp(s, email);
  const device = new SoftwareAuthenticator(ORIGIN, "localhost");
  const creation = (await (
    await s.request("POST", "/user/webauthn/add", { token: session.accessToken })
  ).json()) as PublicKeyCredentialCreationOptionsJSON;
  const added = await s.post(
    "/user/webauthn/verify",
    { credential: await device.create(creation), nickname: "key" },
    session.accessToken,
  );
  expect(added.status).toBe(200);
  expect((await s.post("/user/mfa", { activeMfaType: "webauthn" }, session.accessToken)).status).toBe(200);
  return { email, session, device };
}

describe("the passkey second step", () => {
  it("sign-in → mfaWebauthn ticket → options → assertion → session (mfa-passkey, phr); replay and other tickets refused", async () => {
    // Threat: the password alone past the key; an assertion replayed, or made for one ticket's challenge used with
    // another ticket; a spent ticket reused.
    const { email, device } = await keyStepUser(svc, "pkstep");
    const first = await passwordSignIn(svc, email);
    expect(first.session).toBeNull();
    expect(first.mfa?.ticket).toMatch(/^mfaWebauthn:[0-9a-f-]{36}$/);
    // Another step's routes do not take it.
    await expectError(
      await svc.post("/signin/mfa/totp", { ticket: first.mfa!.ticket, otp: "123456" }),
      401,
      "invalid-ticket",
    );
    const other = await passwordSignIn(svc, email);
    const forOther = await device.get(await options(svc, other.mfa!.ticket));
    await expectError(
      await svc.post("/signin/mfa/webauthn/verify", { ticket: first.mfa!.ticket, credential: forOther }),
      400,
      "invalid-request",
    );
    const credential = await device.get(await options(svc, first.mfa!.ticket));
    const done = await svc.post("/signin/mfa/webauthn/verify", { ticket: first.mfa!.ticket, credential });
    expect(done.status).toBe(200);
    const { session } = (await done.json()) as { session: WireSession };
    expect(session.user.activeMfaType).toBe("webauthn");
    expect(await methodOf(session)).toBe("mfa-passkey");
    expect(levelOf(methodsOfSessionRow("mfa-passkey"))).toBe(LEVEL.phr);
    const replayed = await svc.post("/signin/mfa/webauthn/verify", { ticket: first.mfa!.ticket, credential });
    await expectError(replayed, 401, "invalid-ticket");
    await expectError(
      await svc.post("/signin/mfa/webauthn", { ticket: first.mfa!.ticket }),
      401,
      "invalid-ticket",
    );
  });

  it("two completions of one ticket at once: one session", async () => {
    // Threat: one proof, two sessions.
    const { email, device } = await keyStepUser(svc, "pkrace");
    const { mfa } = await passwordSignIn(svc, email);
    const a = await device.get(await options(svc, mfa!.ticket));
    const b = await device.get(await options(svc, mfa!.ticket));
    const answers = await Promise.all([
      svc.post("/signin/mfa/webauthn/verify", { ticket: mfa!.ticket, credential: a }),
      svc.post("/signin/mfa/webauthn/verify", { ticket: mfa!.ticket, credential: b }),
    ]);
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
  });

  it("without user verification: a second factor (mfa-webauthn), never phr; refused when the settings require it", async () => {
    // Threat: a key that proves presence only (anyone holding it) counted as a passkey's phishing-resistant proof.
    const { email, device } = await keyStepUser(svc, "pkup");
    const { mfa } = await passwordSignIn(svc, email);
    const credential = await device.get(await options(svc, mfa!.ticket), { userVerified: false });
    const done = await svc.post("/signin/mfa/webauthn/verify", { ticket: mfa!.ticket, credential });
    expect(done.status).toBe(200);
    expect(await methodOf(((await done.json()) as { session: WireSession }).session)).toBe("mfa-webauthn");
    expect(levelOf(methodsOfSessionRow("mfa-webauthn"))).toBe(LEVEL.pwd);

    const strict = service({ ...ON, AUTH_MFA_WEBAUTHN_USER_VERIFICATION: "required" });
    const again = await passwordSignIn(strict, email);
    const asked = await options(strict, again.mfa!.ticket);
    expect(asked.userVerification).toBe("required");
    const presenceOnly = await device.get(asked, { userVerified: false });
    await expectError(
      await strict.post("/signin/mfa/webauthn/verify", {
        ticket: again.mfa!.ticket,
        credential: presenceOnly,
      }),
      400,
      "invalid-request",
    );
  });

  it("deleting the last key drops the step: activeMfaType falls back and the password signs in", async () => {
    // Threat: a choice left standing with no key behind it would lock the owner out.
    const { email, session } = await keyStepUser(svc, "pkdel");
    const { securityKeys } = (await (await svc.get("/user/security-keys", session.accessToken)).json()) as {
      securityKeys: { id: string }[];
    };
    const removed = await svc.request("DELETE", `/user/security-keys/${securityKeys[0]!.id}`, {
      token: session.accessToken,
    });
    expect(removed.status).toBeLessThan(300);
    const after = await passwordSignIn(svc, email);
    expect(after.mfa).toBeNull();
    expect(after.session?.user.activeMfaType).toBeNull();
  });
});
