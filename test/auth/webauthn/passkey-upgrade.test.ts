// Passkey upgrades (docs/passkeys.md, src/auth/webauthn/upgrade.ts): `POST /user/webauthn/add {upgrade:true}`, the
// API side of WebAuthn L3 §5.1.3's conditional create (`mediation: "conditional"`, client capability
// `conditionalCreate`). The threat throughout: a passkey made without the user's gesture is a credential planted by
// whoever holds the session's access token, so it is allowed only right after a first-factor sign-in, once, by
// that session, the user hears of it, and it proves no more than that sign-in until used with user verification.
import type {
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
} from "@simplewebauthn/server";
import { describe, expect, it } from "vitest";
import { levelOf, methodsOfSessionRow } from "../../../src/browser/acr";
import { FLAGS, SoftwareAuthenticator } from "../../fakes/authenticator";
import {
  auditTypesOf,
  expectError,
  mailbox,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
  type WireSession,
} from "../../helpers";
import { userD1 } from "../../support/shards";

const ORIGIN = "http://localhost:3000";
const svc = service({ ...NO_VERIFICATION, AUTH_WEBAUTHN_ENABLED: "true" });
const NO_GESTURE = 0; // neither UP nor UV: what a password manager's conditional create may send

async function json<T>(response: Response): Promise<T> {
  const body = await response.json();
  if (response.status !== 200)
    throw new Error(`expected 200, got ${response.status} ${JSON.stringify(body)}`);
  return body as T;
}

const upgradeOptions = (session: WireSession) =>
  svc.post("/user/webauthn/add", { upgrade: true }, session.accessToken);

/** A password user's fresh session, and an authenticator. */
async function freshUser() {
  const email = uniqueEmail("upgrade");
  const session = await signUp(svc, email);
  return { email, session, device: new SoftwareAuthenticator(ORIGIN, "localhost") };
}

async function upgrade(session: WireSession, device: SoftwareAuthenticator, flags = NO_GESTURE) {
  const options = await json<PublicKeyCredentialCreationOptionsJSON>(await upgradeOptions(session));
  const credential = await device.create(options, { flags });
  return svc.post("/user/webauthn/verify", { credential }, session.accessToken);
}

const keyRow = (userId: string) =>
  userD1(userId)
    .prepare("SELECT upgrade_session_id, user_verified_at FROM security_keys WHERE user_id = ?")
    .bind(userId)
    .first<{ upgrade_session_id: string | null; user_verified_at: number | null }>();

async function signInWith(device: SoftwareAuthenticator, flags: number) {
  const options = await json<PublicKeyCredentialRequestOptionsJSON>(await svc.post("/signin/webauthn", {}));
  const credential = await device.get(options, { flags });
  return (await json<{ session: WireSession }>(await svc.post("/signin/webauthn/verify", { credential })))
    .session;
}

const sessionMethod = (userId: string, sessionId: string) =>
  userD1(userId)
    .prepare("SELECT method FROM sessions WHERE id = ?")
    .bind(sessionId)
    .first<{ method: string }>()
    .then((row) => row?.method);

describe("passkey upgrade (WebAuthn L3 §5.1.3 conditional create)", () => {
  // 4 sign-ups, 3 registrations, 3 assertions: one file's worth of requests on the in-process service.
  it("registers with user presence 0 after a password sign-in, once, records and mails it", async () => {
    const { email, session, device } = await freshUser();
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(await upgradeOptions(session));
    // A passkey: discoverable, so the autofill sign-in finds it with no email typed (WebAuthn §6.2.2).
    expect(options.authenticatorSelection?.residentKey).toBe("required");
    const credential = await device.create(options, { flags: NO_GESTURE });
    const added = await json<{ id: string }>(
      await svc.post("/user/webauthn/verify", { credential }, session.accessToken),
    );
    expect(added.id).toBeTruthy();
    expect(await keyRow(session.user.id)).toEqual({
      upgrade_session_id: session.refreshTokenId,
      user_verified_at: null,
    });
    const [mail] = await mailbox(svc, email);
    expect(mail?.subject).toBe("A passkey was added to your account");
    expect(mail?.text).toContain("/account#passkeys");
    expect(await auditTypesOf(session.user.id)).toContain("security-key.added");

    // Once per session: another upgrade of the same session is refused, before and at the ceremony's end.
    await expectError(await upgradeOptions(session), 403, "forbidden");
    const second = await freshUser();
    const early = await json<PublicKeyCredentialCreationOptionsJSON>(await upgradeOptions(second.session));
    const late = await json<PublicKeyCredentialCreationOptionsJSON>(await upgradeOptions(second.session));
    await json(
      await svc.post(
        "/user/webauthn/verify",
        { credential: await second.device.create(early, { flags: NO_GESTURE }) },
        second.session.accessToken,
      ),
    );
    const raced = await svc.post(
      "/user/webauthn/verify",
      { credential: await second.device.create(late, { flags: NO_GESTURE }) },
      second.session.accessToken,
    );
    await expectError(raced, 403, "forbidden");
  });

  it("refuses after 5 minutes, from a passkey's session, from another session, and UP=0 outside an upgrade", async () => {
    // Threat: a token stolen later plants a key. The window is the session row's sign-in time.
    const { session } = await freshUser();
    await userD1(session.user.id)
      .prepare("UPDATE sessions SET created_at = created_at - ? WHERE id = ?")
      .bind(5 * 60 * 1000 + 1000, session.refreshTokenId)
      .run();
    const stale = await expectError(await upgradeOptions(session), 403, "forbidden");
    expect(stale.message).toContain("5 minutes");

    // Options asked by one session, answered from another session of the same user: its challenge is not theirs.
    const other = await freshUser();
    const options = await json<PublicKeyCredentialCreationOptionsJSON>(await upgradeOptions(other.session));
    const signedInAgain = (
      await json<{ session: WireSession }>(
        await svc.post("/signin/email-password", { email: other.email, password: PASSWORD }),
      )
    ).session;
    const credential = await other.device.create(options, { flags: NO_GESTURE });
    await expectError(
      await svc.post("/user/webauthn/verify", { credential }, signedInAgain.accessToken),
      400,
      "invalid-request",
    );

    // A session a passkey began is no first-factor sign-in: nothing to upgrade (the key would be its own proof).
    const upgraded = await freshUser();
    await json(await upgrade(upgraded.session, upgraded.device));
    const byPasskey = await signInWith(upgraded.device, FLAGS.UP | FLAGS.UV);
    await expectError(await upgradeOptions(byPasskey), 403, "forbidden");

    // User presence 0 is accepted for an upgrade only: a plain add with no gesture is refused (WebAuthn §7.1 step 14).
    const plain = await freshUser();
    const addOptions = await json<PublicKeyCredentialCreationOptionsJSON>(
      await svc.post("/user/webauthn/add", {}, plain.session.accessToken),
    );
    const noPresence = await plain.device.create(addOptions, { flags: NO_GESTURE });
    await expectError(
      await svc.post("/user/webauthn/verify", { credential: noPresence }, plain.session.accessToken),
      400,
      "invalid-request",
    );
    // Bad input in the contract's shape, never a 500.
    await expectError(
      await svc.post("/user/webauthn/add", { upgrade: "yes" }, plain.session.accessToken),
      400,
      "invalid-request",
    );
    await expectError(await svc.post("/user/webauthn/add", { upgrade: true }), 401, "unauthorized");
  });

  it("never counts as phr until used with user verification (WebAuthn §6.1 flag UV)", async () => {
    // Threat: whoever planted the key (a phished password's session) gets a phishing-resistant sign-in from it.
    const { session, device } = await freshUser();
    await json(await upgrade(session, device));

    const presenceOnly = await signInWith(device, FLAGS.UP);
    expect(await sessionMethod(presenceOnly.user.id, presenceOnly.refreshTokenId)).toBe("webauthn-upgrade");
    expect(levelOf(methodsOfSessionRow("webauthn-upgrade"))).toBe(0);
    // An elevated token counts as a passkey proof: not from this key yet.
    const elevateOptions = await json<PublicKeyCredentialRequestOptionsJSON>(
      await svc.post("/elevate/webauthn", undefined, presenceOnly.accessToken),
    );
    const unverified = await device.get(elevateOptions, { flags: FLAGS.UP });
    await expectError(
      await svc.post("/elevate/webauthn/verify", { credential: unverified }, presenceOnly.accessToken),
      400,
      "invalid-request",
    );
    expect((await keyRow(session.user.id))?.user_verified_at).toBeNull();

    const verified = await signInWith(device, FLAGS.UP | FLAGS.UV);
    expect(await sessionMethod(verified.user.id, verified.refreshTokenId)).toBe("webauthn");
    expect((await keyRow(session.user.id))?.user_verified_at).toEqual(expect.any(Number));
    // From then on even a presence-only assertion is the passkey it now is.
    const later = await signInWith(device, FLAGS.UP);
    expect(await sessionMethod(later.user.id, later.refreshTokenId)).toBe("webauthn");
  });
});
