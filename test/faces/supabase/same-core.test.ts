// One core behind both faces (issue 43, "The same accounts as the Nhost face"): what guards and watches an account —
// lockout, breached passwords, the custom-access-token hook, the event stream that webhooks and the mirror read, the
// audit, the admin API the console uses, an organization's enforced SSO (oauth-sso.test.ts) — sees a user and a
// session of the Supabase face exactly as the Nhost face's. The threat throughout: a second door into the same accounts
// that the first door's protections do not watch (guesses not counted, a breached password let in, an event or audit
// line missing, a session the admin cannot see or end).

import { env } from "cloudflare:test";
import { AuthSessionMissingError } from "@supabase/supabase-js";
import { describe, expect, inject, it } from "vitest";
import type { StreamEvent } from "../../../src/events/types";
import {
  auditTypesOf,
  decodeJwt,
  expectError,
  PASSWORD,
  signUp,
  uniqueAddress,
  uniqueEmail,
} from "../../helpers";
import { hookReceiver } from "../../hooks/support";
import { supabaseClient, supabaseService } from "./support";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const WRONG = "not the password at all";

/** A stand-in for the EVENTS queue binding that records what the service hands to it (test/events/outbox.test.ts). */
function recordingQueue() {
  const sent: StreamEvent[] = [];
  return {
    sent,
    queue: {
      async send(body: StreamEvent) {
        sent.push(body);
      },
      async sendBatch(messages: Iterable<{ body: StreamEvent }>) {
        for (const message of messages) sent.push(message.body);
      },
    },
    typesOf: (subject: string) =>
      sent.filter((event) => event.subject === subject).map((event) => event.type),
  };
}

describe("lockout counts the face's guesses on the account", () => {
  // Threat: credential stuffing through the face, uncounted, or a lock one face keeps and the other does not.
  it("wrong passwords through signInWithPassword lock the account for both faces", async () => {
    const svc = supabaseService({ AUTH_LOCKOUT_THRESHOLD: "3" });
    const { user } = await signUp(svc);
    const face = supabaseClient(svc, undefined, { "cf-connecting-ip": uniqueAddress() });
    for (let i = 0; i < 3; i++) {
      const { error } = await face.auth.signInWithPassword({ email: user.email, password: WRONG });
      expect(error?.code).toBe("invalid_credentials");
    }
    const locked = await face.auth.signInWithPassword({ email: user.email, password: PASSWORD });
    expect(locked.error?.status).toBe(429);
    expect(locked.error?.code).toBe("over_request_rate_limit");
    const nhost = await svc.request("POST", "/signin/email-password", {
      json: { email: user.email, password: PASSWORD },
      headers: { "cf-connecting-ip": uniqueAddress() },
    });
    await expectError(nhost, 429, "account-locked");
    expect(await auditTypesOf(user.id)).toContain("signin.locked");
  });
});

describe("breached passwords are refused through the face", () => {
  const RANGE_API = inject("pwnedPasswordsUrl");
  const svc = supabaseService({
    OUTBOUND: undefined,
    AUTH_PASSWORD_HIBP_ENABLED: "true",
    AUTH_PASSWORD_HIBP_URL: `${RANGE_API}/range`,
  });

  async function breached(): Promise<string> {
    const password = `breached ${crypto.randomUUID()}`;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-1", new TextEncoder().encode(password)));
    const sha1 = [...digest]
      .map((byte) => byte.toString(16).padStart(2, "0"))
      .join("")
      .toUpperCase();
    const added = await fetch(`${RANGE_API}/__breached`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sha1, count: 7 }),
    });
    expect(added.status).toBe(201);
    return password;
  }

  // Threat: a password from a known breach set through the second door (sign-up or a change).
  it("signUp and updateUser: 422 weak_password with the reason pwned", async () => {
    const supabase = supabaseClient(svc);
    const refused = await supabase.auth.signUp({ email: uniqueEmail("pwned"), password: await breached() });
    expect(refused.error?.status).toBe(422);
    expect(refused.error?.code).toBe("weak_password");
    expect((refused.error as { reasons?: string[] }).reasons).toEqual(["pwned"]);

    const email = uniqueEmail("pwned-change");
    expect((await supabase.auth.signUp({ email, password: PASSWORD })).error).toBeNull();
    const changed = await supabase.auth.updateUser({ password: await breached() });
    expect(changed.error?.code).toBe("weak_password");
    expect((await supabase.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  });
});

describe("the custom-access-token hook shapes the face's tokens too", () => {
  // Threat: an app's claims (a tenant, a plan) missing from tokens of the second face, so its Hasura permissions
  // decide on less than the app meant; the app's answer overriding who the user is.
  it("the app's claims are in the Hasura namespace of a face token; sub, role and GoTrue's claims stay the service's", async () => {
    const hooks = hookReceiver({
      CUSTOM_ACCESS_TOKEN: () =>
        Response.json({ claims: { "x-hasura-tenant-id": "t-42", "x-hasura-user-id": "someone-else" } }),
    });
    const svc = supabaseService(hooks.bindings);
    const supabase = supabaseClient(svc);
    const email = uniqueEmail("hooked");
    const { data, error } = await supabase.auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const claims = decodeJwt(data.session!.access_token).payload;
    expect(claims).toMatchObject({ sub: data.user!.id, role: "authenticated", email, aud: "authenticated" });
    expect(claims["https://hasura.io/jwt/claims"]).toMatchObject({
      "x-hasura-tenant-id": "t-42",
      "x-hasura-user-id": data.user!.id,
    });
    expect(hooks.callsOf("CUSTOM_ACCESS_TOKEN").length).toBeGreaterThan(0);
    expect(hooks.unverified).toEqual([]);
  });
});

describe("events and audit: the same lines for the same life", () => {
  // Threat: webhooks and the mirror (both read the event stream) or the audit missing what happened through the face.
  it("sign-up, sign-in, refresh and sign-out write the events and audit lines the Nhost face writes", async () => {
    const events = recordingQueue();
    const svc = supabaseService({ EVENTS: events.queue });

    const nhostEmail = uniqueEmail("nhost-life");
    const signedUp = await svc.post("/signup/email-password", { email: nhostEmail, password: PASSWORD });
    expect(signedUp.status).toBe(200);
    const nhostId = ((await signedUp.json()) as { session: { user: { id: string } } }).session.user.id;
    const signedIn = await svc.post("/signin/email-password", { email: nhostEmail, password: PASSWORD });
    const { session } = (await signedIn.json()) as { session: { accessToken: string; refreshToken: string } };
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken });
    const renewed = (await refreshed.json()) as { accessToken: string; refreshToken: string };
    const signedOut = await svc.post("/signout", { refreshToken: renewed.refreshToken }, renewed.accessToken);
    expect(signedOut.status).toBe(200);

    const supabase = supabaseClient(svc);
    const faceEmail = uniqueEmail("face-life");
    const made = await supabase.auth.signUp({ email: faceEmail, password: PASSWORD });
    const faceId = made.data.user!.id;
    expect(
      (await supabase.auth.signInWithPassword({ email: faceEmail, password: PASSWORD })).error,
    ).toBeNull();
    expect((await supabase.auth.refreshSession()).error).toBeNull();
    expect((await supabase.auth.signOut({ scope: "local" })).error).toBeNull();

    expect(events.typesOf(faceId).length).toBeGreaterThan(0);
    expect(events.typesOf(faceId)).toEqual(events.typesOf(nhostId));
    expect(await auditTypesOf(faceId)).toEqual(await auditTypesOf(nhostId));
  });
});

describe("the admin API (and the console on it) sees and ends the face's sessions", () => {
  // Threat: a session of the second face the operator cannot list or revoke (a stolen laptop's session survives).
  it("lists the face's session and a revoke ends it: refreshSession fails, getUser answers session_not_found", async () => {
    const svc = supabaseService();
    const supabase = supabaseClient(svc);
    const { data } = await supabase.auth.signUp({ email: uniqueEmail("admin-sees"), password: PASSWORD });
    const userId = data.user!.id;
    const listed = await svc.request("GET", `/admin/users/${userId}/sessions`, { headers: ADMIN });
    expect(listed.status).toBe(200);
    const { items } = (await listed.json()) as { items: { id: string }[] };
    const sessionId = decodeJwt(data.session!.access_token).payload.session_id as string;
    expect(items.map((item) => item.id)).toEqual([sessionId]);

    const revoked = await svc.request("DELETE", `/admin/sessions/${sessionId}`, { headers: ADMIN });
    expect(revoked.status, await revoked.clone().text()).toBeLessThan(300);
    // GoTrue's 403 session_not_found, which auth-js reads as a missing session.
    expect((await supabase.auth.getUser()).error).toBeInstanceOf(AuthSessionMissingError);
    expect(
      (await supabaseClient(svc).auth.refreshSession({ refresh_token: data.session!.refresh_token })).error,
    ).not.toBeNull();
  });
});
