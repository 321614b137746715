// The mail transport failing under two mails of issue 47 (docs/decisions.md, "Issue 47: the passkeys console, the
// upgrade flag's reference, two mail failures"):
// - the passkey-upgrade notice, a notice about something already done, as the new-device mail is: the passkey stays
//   added, the failure is logged under its own name (never a 500 for a key that was registered);
// - the email second step's code, the step itself: without the mail there is no step, so 503 in the contract's shape,
//   and no ticket left behind that nobody holds; the same through the Supabase face's challenge of its email factor
//   (GoTrue's 503 shape, no challenge row).

import { env } from "cloudflare:test";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { describe, expect, it, vi } from "vitest";
import { FACE, PUBLISHABLE_KEY, supabaseService } from "../faces/supabase/support";
import { SoftwareAuthenticator } from "../fakes/authenticator";
import {
  auditTypesOf,
  expectError,
  NO_VERIFICATION,
  PASSWORD,
  service,
  signUp,
  uniqueEmail,
} from "../helpers";
import { failingEmail } from "../support/faults";
import { userD1 } from "../support/shards";
import { expectUnavailable } from "./support";

const BROKEN_MAIL = { AUTH_DEV_MAILBOX: "false", AUTH_SMTP_SENDER: "noreply@example.com" };

/** Runs `work` with console.error captured; answers the lines logged. */
async function logged(work: () => Promise<void>): Promise<string[]> {
  const spy = vi.spyOn(console, "error").mockImplementation(() => {});
  try {
    await work();
    return spy.mock.calls.map(([line]) => String(line));
  } finally {
    spy.mockRestore();
  }
}

describe("the passkey-upgrade mail failing", () => {
  it("the passkey is still added (200, the row, its audit event); the failure logged by name", async () => {
    // Threat: a mail outage turning a registered key into an error the app retries (a second key, or none the user
    // knows of), or the failure vanishing without a trace.
    const { binding, fault } = failingEmail(env.CF_EMAIL, { times: 100 });
    const svc = service({
      ...NO_VERIFICATION,
      ...BROKEN_MAIL,
      EMAIL: binding,
      AUTH_WEBAUTHN_ENABLED: "true",
    });
    const session = await signUp(svc, uniqueEmail("upmailfail"));
    const device = new SoftwareAuthenticator("http://localhost:3000", "localhost");
    let requestId = "";
    const lines = await logged(async () => {
      const options = (await (
        await svc.post("/user/webauthn/add", { upgrade: true }, session.accessToken)
      ).json()) as PublicKeyCredentialCreationOptionsJSON;
      const credential = await device.create(options, { flags: 0 });
      const added = await svc.post("/user/webauthn/verify", { credential }, session.accessToken);
      expect(added.status).toBe(200);
      requestId = added.headers.get("x-request-id")!;
    });
    expect(fault.failures).toBe(1);
    // Threat (as well): a failure the operator cannot tie to the request that caused it (logged as request `-`).
    const failure = lines.find((line) => line.includes('"what":"passkey-upgrade mail"'));
    expect(JSON.parse(failure!)).toMatchObject({ level: "error", requestId });
    expect(requestId).toBeTruthy();
    const row = await userD1(session.user.id)
      .prepare("SELECT upgrade_session_id FROM security_keys WHERE user_id = ?")
      .bind(session.user.id)
      .first<{ upgrade_session_id: string }>();
    expect(row?.upgrade_session_id).toBe(session.refreshTokenId);
    expect(await auditTypesOf(session.user.id)).toContain("security-key.added");
  });
});

describe("the email second step's code mail failing", () => {
  const settings = { ...NO_VERIFICATION, AUTH_MFA_ENABLED: "true" };
  const working = service(settings);
  const ADMIN = { "x-hasura-admin-secret": String(working.env.AUTH_ADMIN_SECRET) };

  it("the first factor answers 503 in the contract's shape, leaves no ticket, and the retry mails the code", async () => {
    // Threat: a right password answered with a ticket whose code never left (a user stuck, or told to wait for a
    // mail that is not coming), a 500, or a ticket row nobody holds left to be guessed at until it expires.
    const email = uniqueEmail("mfamailfail");
    const { user, accessToken } = await signUp(working, email);
    const patched = await working.request("PATCH", `/admin/users/${user.id}`, {
      json: { emailVerified: true },
      headers: ADMIN,
    });
    expect(patched.status).toBe(200);
    expect((await working.post("/user/mfa", { activeMfaType: "email" }, accessToken)).status).toBe(200);
    const tickets = () =>
      userD1(user.id)
        .prepare("SELECT COUNT(*) AS n FROM mfa_tickets WHERE user_id = ?")
        .bind(user.id)
        .first<{ n: number }>()
        .then((row) => row?.n);
    const before = await tickets();

    const { binding, fault } = failingEmail(env.CF_EMAIL, { times: 1 });
    const broken = service({ ...settings, ...BROKEN_MAIL, EMAIL: binding });
    const signIn = () => broken.post("/signin/email-password", { email, password: PASSWORD });
    const lines = await logged(async () => expectUnavailable(await signIn()));
    expect(fault.failures).toBe(1);
    expect(lines.length).toBeGreaterThan(0);
    expect(await tickets()).toBe(before);
    // No session either: the password alone never signs in past the step.
    const sessions = await userD1(user.id)
      .prepare("SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?")
      .bind(user.id)
      .first<{ n: number }>();
    expect(sessions?.n).toBe(1); // the sign-up's

    // The transport back: the retry answers the ticket, its code sent.
    const retried = (await (await signIn()).json()) as { session: unknown; mfa: { ticket: string } };
    expect(retried.session).toBeNull();
    expect(retried.mfa.ticket).toMatch(/^mfaEmail:/);
    expect(fault.calls).toBe(2);
    expect(await tickets()).toBe((before ?? 0) + 1);
    // The step's route with no code to match: the contract's 401, never a 500.
    await expectError(
      await broken.post("/signin/mfa/email", { ticket: retried.mfa.ticket, otp: "000000" }),
      401,
      "invalid-totp",
    );
  });
});

describe("the Supabase face's email factor challenge with the code mail failing", () => {
  const settings = { AUTH_MFA_ENABLED: "true" };
  const face = supabaseService(settings);
  const ADMIN = { "x-hasura-admin-secret": String(face.env.AUTH_ADMIN_SECRET) };

  it("answers GoTrue's 503 with Retry-After in both error shapes, leaves no challenge; the retry mails", async () => {
    // Threat: auth-js's `mfa.challenge` answered with a challenge id whose code never left (the user waits for a mail
    // that is not coming), a 500, or a challenge row nobody can answer left to be guessed at until it expires.
    const email = uniqueEmail("sbmfamailfail");
    const { user, accessToken } = await signUp(face, email);
    const patched = await face.request("PATCH", `/admin/users/${user.id}`, {
      json: { emailVerified: true },
      headers: ADMIN,
    });
    expect(patched.status).toBe(200);
    expect((await face.post("/user/mfa", { activeMfaType: "email" }, accessToken)).status).toBe(200);
    const signedIn = await face.request("POST", `${FACE}/auth/v1/token?grant_type=password`, {
      headers: { apikey: PUBLISHABLE_KEY, "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const { access_token, user: faceUser } = (await signedIn.json()) as {
      access_token: string;
      user: { factors: { id: string; factor_type: string }[] };
    };
    const factor = faceUser.factors.find((one) => one.factor_type === "email")!;
    const tickets = () =>
      userD1(user.id)
        .prepare("SELECT COUNT(*) AS n FROM mfa_tickets WHERE user_id = ?")
        .bind(user.id)
        .first<{ n: number }>()
        .then((row) => row?.n ?? 0);
    const before = await tickets();

    const { binding, fault } = failingEmail(env.CF_EMAIL, { times: 2 });
    const broken = supabaseService({ ...settings, ...BROKEN_MAIL, EMAIL: binding });
    const challenge = (version: Record<string, string> = {}) =>
      broken.request("POST", `${FACE}/auth/v1/factors/${factor.id}/challenge`, {
        headers: {
          apikey: PUBLISHABLE_KEY,
          authorization: `Bearer ${access_token}`,
          "content-type": "application/json",
          ...version,
        },
        body: "{}",
      });
    const answers: { status: number; retryAfter: number; code: string | null; body: unknown }[] = [];
    const lines = await logged(async () => {
      const versions: Record<string, string>[] = [{}, { "X-Supabase-Api-Version": "2024-01-01" }];
      for (const version of versions) {
        const failed = await challenge(version);
        answers.push({
          status: failed.status,
          retryAfter: Number(failed.headers.get("retry-after")),
          code: failed.headers.get("x-sb-error-code"),
          body: await failed.json(),
        });
      }
    });
    for (const answer of answers) {
      expect(answer).toMatchObject({ status: 503, code: "unexpected_failure" });
      expect(answer.retryAfter).toBeGreaterThan(0);
    }
    // The older shape, then 2024-01-01's (the version auth-js sends): GoTrue's, nothing of the transport in it.
    expect(answers[0]!.body).toEqual({
      code: 503,
      error_code: "unexpected_failure",
      msg: expect.any(String),
    });
    expect(answers[1]!.body).toEqual({ code: "unexpected_failure", message: expect.any(String) });
    expect(JSON.stringify(answers)).not.toMatch(/SEND_EMAIL|smtp|\bat \S+:\d+/i);
    expect(fault.failures).toBe(2);
    expect(lines.length).toBeGreaterThan(0);
    expect(await tickets()).toBe(before);

    // The transport back: the same call answers a challenge, its code mailed.
    const retried = await challenge();
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { type: string }).type).toBe("email");
    expect(fault.calls).toBe(3);
    expect(await tickets()).toBe(before + 1);
  });
});
