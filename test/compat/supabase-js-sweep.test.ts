// Every row of docs/supabase.md's method table once more, the way an app meets it: the real `@supabase/supabase-js`
// against `wrangler dev` over HTTP (the workers-project tests in test/faces/supabase/ drive the same client inside the
// Worker, with the edge cases; here each method goes over a real socket, through the bundled Worker, its real
// outbound fetch to the fake GitHub and the fake upstream project, and real WebSockets). A method whose answer the
// client cannot read over the network — a header lost, a redirect a browser would not follow, a body shape a
// Workers `Response` changes in transit — fails here.

import { decodeBase32IgnorePadding } from "@oslojs/encoding";
import { generateTOTP } from "@oslojs/otp";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { encode } from "fast-png";
import { imageSize } from "image-size";
import { describe, expect, inject, it } from "vitest";
import { uniquePhone } from "../support/phones";
import {
  answerQuestion,
  authUrl,
  latestMail,
  PASSWORD,
  REDIRECT,
  serverUrl,
  turnstileToken,
  uniqueEmail,
  verifiedUser,
} from "./client";

const keys = inject("supabaseKeys");
const IDP = inject("oidcIdpUrl");
const FACE = `${serverUrl}/supabase`;

function supabase(key = keys.publishable, flowType: "implicit" | "pkce" = "implicit"): SupabaseClient {
  return createClient(FACE, key, {
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false, flowType },
  });
}

/** A confirmed user, made by the operator, signed in on a client of its own. */
async function signedIn(tag: string): Promise<{ client: SupabaseClient; email: string; id: string }> {
  const email = uniqueEmail(tag);
  const made = await supabase(keys.secret).auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  expect(made.error).toBeNull();
  const client = supabase();
  expect((await client.auth.signInWithPassword({ email, password: PASSWORD })).error).toBeNull();
  return { client, email, id: made.data.user!.id };
}

/** The 6-digit code of the newest mail to `email` (every mail of the face carries one). */
async function mailedCode(email: string): Promise<string> {
  return /\b(\d{6})\b/.exec((await latestMail(email)).text)![1]!;
}

/** The newest text to `phone` (GoTrue's digits; the development SMS transport keeps E.164), its code. */
async function textedCode(phone: string): Promise<string> {
  const url = `${serverUrl}/auth/v1/dev/sms?to=${encodeURIComponent(`+${phone}`)}`;
  const texts = (await (await fetch(url)).json()) as { body: string }[];
  return /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
}

/**
 * A browser through a provider sign-in: the face's /authorize → the fake GitHub (as `who`) → the service's callback
 * → the face's /callback → the app. Each hop carries the cookies the service set, as a browser would.
 */
async function throughGitHub(url: string, who: Record<string, string>): Promise<URL> {
  let cookie = "";
  const hop = async (at: string | URL): Promise<URL> => {
    let response = await fetch(at, { redirect: "manual", headers: cookie ? { cookie } : {} });
    const set = response.headers.getSetCookie().map((line) => line.split(";")[0]);
    if (set.length > 0) cookie = [cookie, ...set].filter(Boolean).join("; ");
    // A link asks first (src/providers/ask-first.ts): the person says yes.
    if (response.status === 200) response = await answerQuestion(response, at, cookie);
    expect([302, 303], `${response.status} at ${at}`).toContain(response.status);
    return new URL(response.headers.get("location")!);
  };
  const atProvider = await hop(url);
  for (const [name, value] of Object.entries(who)) atProvider.searchParams.set(name, value);
  let next = await hop(atProvider);
  while (next.origin === new URL(serverUrl).origin) next = await hop(next);
  return next;
}

const githubPerson = () => {
  const id = String(Math.floor(Math.random() * 1e12));
  return { fake_id: id, fake_email: `gh${id}@example.com` };
};

describe("auth-js against wrangler dev, method by method", () => {
  it("signInWithOAuth (implicit): GitHub, the session in the fragment; getUserIdentities lists it", async () => {
    const client = supabase();
    const { data } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: REDIRECT, skipBrowserRedirect: true },
    });
    const who = githubPerson();
    const landed = await throughGitHub(data.url!, who);
    expect(`${landed.origin}${landed.pathname}`).toBe(REDIRECT);
    const fragment = new URLSearchParams(landed.hash.slice(1));
    const session = await client.auth.setSession({
      access_token: fragment.get("access_token")!,
      refresh_token: fragment.get("refresh_token")!,
    });
    expect(session.error).toBeNull();
    expect(session.data.user?.email).toBe(who.fake_email);
    const identities = await client.auth.getUserIdentities();
    expect(identities.data?.identities.map((identity) => identity.provider)).toContain("github");
  });

  it("signInWithOAuth (PKCE) and exchangeCodeForSession: ?code= once", async () => {
    const client = supabase(keys.publishable, "pkce");
    const { data } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: REDIRECT, skipBrowserRedirect: true },
    });
    const landed = await throughGitHub(data.url!, githubPerson());
    const code = landed.searchParams.get("code");
    expect(code, landed.href).toBeTruthy();
    const exchanged = await client.auth.exchangeCodeForSession(code!);
    expect(exchanged.error).toBeNull();
    expect(exchanged.data.session?.token_type).toBe("bearer");
    expect((await client.auth.exchangeCodeForSession(code!)).error).not.toBeNull();
  });

  it("signInWithOtp and verifyOtp (email code), resend, resetPasswordForEmail, signInAnonymously", async () => {
    const email = uniqueEmail("sweep-otp");
    const client = supabase();
    expect((await client.auth.signInWithOtp({ email })).error).toBeNull();
    expect((await client.auth.resend({ type: "signup", email })).error).toBeNull();
    const verified = await client.auth.verifyOtp({ email, token: await mailedCode(email), type: "email" });
    expect(verified.error).toBeNull();
    expect(verified.data.user?.email).toBe(email);
    // The compat server guards password resets with Turnstile (its fake siteverify): auth-js sends captchaToken.
    const captchaToken = turnstileToken("password-reset");
    expect(
      (await client.auth.resetPasswordForEmail(email, { redirectTo: REDIRECT, captchaToken })).error,
    ).toBeNull();
    const recovered = await supabase().auth.verifyOtp({
      email,
      token: await mailedCode(email),
      type: "recovery",
    });
    expect(recovered.error).toBeNull();

    const anonymous = await supabase().auth.signInAnonymously();
    expect(anonymous.error).toBeNull();
    expect(anonymous.data.user?.is_anonymous).toBe(true);
  });

  it("signUp by phone, verifyOtp (sms), signInWithPassword (phone); updateUser email; reauthenticate", async () => {
    // GoTrue's numbers are digits without the "+", as auth-js sends them.
    const phone = uniquePhone().slice(1);
    const client = supabase();
    const up = await client.auth.signUp({ phone, password: PASSWORD });
    expect(up.error).toBeNull();
    const confirmed = await client.auth.verifyOtp({ phone, token: await textedCode(phone), type: "sms" });
    expect(confirmed.error).toBeNull();
    expect(confirmed.data.user?.phone).toBe(phone);
    expect((await supabase().auth.signInWithPassword({ phone, password: PASSWORD })).error).toBeNull();

    const { client: mailer, email } = await signedIn("sweep-change");
    const next = uniqueEmail("sweep-changed");
    const asked = await mailer.auth.updateUser({ email: next });
    expect(asked.error).toBeNull();
    expect(asked.data.user?.new_email).toBe(next);
    expect((await mailer.auth.reauthenticate()).error).toBeNull();
    expect((await latestMail(email)).text).toMatch(/\b\d{6}\b/);
  });

  it("mfa: enroll TOTP, challengeAndVerify, getAuthenticatorAssuranceLevel, listFactors, unenroll", async () => {
    const { client } = await signedIn("sweep-mfa");
    const enrolled = await client.auth.mfa.enroll({ factorType: "totp", friendlyName: "phone app" });
    expect(enrolled.error).toBeNull();
    const key = decodeBase32IgnorePadding(enrolled.data!.totp.secret);
    const code = generateTOTP(key, 30, 6);
    const verified = await client.auth.mfa.challengeAndVerify({ factorId: enrolled.data!.id, code });
    expect(verified.error).toBeNull();
    const level = await client.auth.mfa.getAuthenticatorAssuranceLevel();
    expect(level.data?.currentLevel).toBe("aal2");
    const factors = await client.auth.mfa.listFactors();
    expect(factors.data?.totp.map((factor) => factor.id)).toEqual([enrolled.data!.id]);
    expect((await client.auth.mfa.unenroll({ factorId: enrolled.data!.id })).error).toBeNull();
  });

  it("linkIdentity and unlinkIdentity (GitHub); mfa.enroll a phone factor, challenge, verify by the texted code", async () => {
    const { client, id } = await signedIn("sweep-link");
    const { data } = await client.auth.linkIdentity({
      provider: "github",
      options: { redirectTo: REDIRECT, skipBrowserRedirect: true },
    });
    const landed = await throughGitHub(data.url!, githubPerson());
    expect(`${landed.origin}${landed.pathname}`).toBe(REDIRECT);
    const linked = await client.auth.getUserIdentities();
    const github = linked.data?.identities.find((identity) => identity.provider === "github");
    expect(github?.user_id).toBe(id);
    expect((await client.auth.unlinkIdentity(github!)).error).toBeNull();
    const after = await client.auth.getUserIdentities();
    expect(after.data?.identities.map((identity) => identity.provider)).toEqual(["email"]);

    const phone = `+1415556${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
    const enrolled = await client.auth.mfa.enroll({ factorType: "phone", phone });
    expect(enrolled.error).toBeNull();
    const challenge = await client.auth.mfa.challenge({ factorId: enrolled.data!.id });
    const code = await textedCode(phone.slice(1));
    const verified = await client.auth.mfa.verify({
      factorId: enrolled.data!.id,
      challengeId: challenge.data!.id,
      code,
    });
    expect(verified.error).toBeNull();
    expect((await client.auth.mfa.getAuthenticatorAssuranceLevel()).data?.currentLevel).toBe("aal2");
  });

  it("signInWithSSO by domain: the org's OIDC connection (a real OpenID provider), the session in the fragment", async () => {
    // The org, its verified domain and its connection, set up on the Nhost API as the customer's IT would.
    const owner = await verifiedUser("sweep-sso-owner");
    const call = async (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
      fetch(`${authUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${owner.accessToken}`,
          "content-type": "application/json",
          ...headers,
        },
        body: json === undefined ? undefined : JSON.stringify(json),
      });
    const org = (await (await call("POST", "/orgs", { name: "Sweep Inc" })).json()) as { id: string };
    const domain = `sweep-${crypto.randomUUID().slice(0, 8)}.test`;
    expect((await call("POST", `/orgs/${org.id}/domains`, { domain })).status).toBe(201);
    const verified = await call("POST", `/admin/orgs/${org.id}/domains/${domain}/verify`, undefined, {
      "x-hasura-admin-secret": inject("adminSecret"),
    });
    expect(verified.status).toBe(200);
    const clientId = `sweep-${crypto.randomUUID().slice(0, 8)}`;
    const made = await call("POST", `/orgs/${org.id}/connections`, {
      type: "oidc",
      issuer: IDP,
      clientId,
      clientSecret: "sweep secret",
    });
    expect(made.status).toBe(201);
    const connection = (await made.json()) as { oidc: { redirectUri: string } };
    const atIdp = (path: string, body: unknown) =>
      fetch(`${IDP}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    await atIdp("/__clients", {
      client_id: clientId,
      client_secret: "sweep secret",
      redirect_uris: [connection.oidc.redirectUri],
    });
    const email = `ana@${domain}`;
    const sub = `sub-${crypto.randomUUID()}`;
    await atIdp("/__accounts", { sub, email, email_verified: true });

    const client = supabase();
    const { data, error } = await client.auth.signInWithSSO({
      domain,
      options: { redirectTo: REDIRECT, skipBrowserRedirect: true },
    });
    expect(error).toBeNull();
    const start = await fetch(data!.url, { redirect: "manual" });
    const cookie = start.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const drive = await fetch(
      `${IDP}/__drive?${new URLSearchParams({ url: start.headers.get("location")!, as: sub })}`,
    );
    let next = new URL(((await drive.json()) as { location: string }).location);
    while (next.origin === new URL(serverUrl).origin) {
      const hop = await fetch(next, { redirect: "manual", headers: { cookie } });
      expect([302, 303]).toContain(hop.status);
      next = new URL(hop.headers.get("location")!);
    }
    expect(`${next.origin}${next.pathname}`).toBe(REDIRECT);
    const fragment = new URLSearchParams(next.hash.slice(1));
    const { data: user } = await client.auth.getUser(fragment.get("access_token")!);
    expect(user.user?.email).toBe(email);
  });

  it("admin: listUsers, getUserById, updateUserById (ban), inviteUserByEmail, generateLink, mfa.listFactors", async () => {
    const admin = supabase(keys.secret).auth.admin;
    const { id, email } = await signedIn("sweep-admin");
    const page = await admin.listUsers({ page: 1, perPage: 2 });
    expect(page.error).toBeNull();
    expect(page.data.users.length).toBeGreaterThan(0);
    expect((await admin.getUserById(id)).data.user?.email).toBe(email);
    const banned = await admin.updateUserById(id, { ban_duration: "1h", app_metadata: { tier: "gold" } });
    expect(banned.data.user?.banned_until).toEqual(expect.any(String));
    expect((await supabase().auth.signInWithPassword({ email, password: PASSWORD })).error?.code).toBe(
      "user_banned",
    );
    const invited = uniqueEmail("sweep-invited");
    expect((await admin.inviteUserByEmail(invited, { redirectTo: REDIRECT })).error).toBeNull();
    expect((await latestMail(invited)).text).toContain("/supabase/auth/v1/verify?token=");
    const link = await admin.generateLink({ type: "magiclink", email });
    expect(link.data.properties?.hashed_token).toEqual(expect.any(String));
    expect((await admin.mfa.listFactors({ userId: id })).data?.factors).toEqual([]);
    expect((await admin.deleteUser(id, true)).error).toBeNull();
  });
});

describe("storage-js against wrangler dev, method by method", () => {
  it("buckets, objects, signed and public URLs, transform, move, copy, remove", async () => {
    const storage = supabase(keys.secret).storage;
    const bucket = `sweep-${crypto.randomUUID().slice(0, 8)}`;
    expect((await storage.createBucket(bucket, { public: true })).error).toBeNull();
    expect((await storage.getBucket(bucket)).data?.public).toBe(true);
    expect((await storage.listBuckets()).data?.map((b) => b.id)).toContain(bucket);
    expect((await storage.updateBucket(bucket, { public: true, fileSizeLimit: 1_000_000 })).error).toBeNull();

    const files = storage.from(bucket);
    const text = new TextEncoder().encode("hello from the sweep");
    const up = await files.upload("notes/a.txt", text, {
      contentType: "text/plain",
      metadata: { kind: "note" },
    });
    expect(up.error).toBeNull();
    expect(
      (await files.update("notes/a.txt", new TextEncoder().encode("changed"), { contentType: "text/plain" }))
        .error,
    ).toBeNull();
    expect(await (await files.download("notes/a.txt")).data?.text()).toBe("changed");
    expect((await files.info("notes/a.txt")).data?.metadata).toEqual({ kind: "note" });
    expect((await files.exists("notes/a.txt")).data).toBe(true);
    expect((await files.list("notes")).data?.map((entry) => entry.name)).toEqual(["a.txt"]);
    expect((await files.copy("notes/a.txt", "notes/b.txt")).error).toBeNull();
    expect((await files.move("notes/b.txt", "archive/b.txt")).error).toBeNull();

    const signed = await files.createSignedUrl("archive/b.txt", 60);
    expect(await (await fetch(signed.data!.signedUrl)).text()).toBe("changed");
    const many = await files.createSignedUrls(["notes/a.txt", "archive/b.txt"], 60);
    expect(many.data?.every((entry) => entry.signedUrl)).toBe(true);
    const publicUrl = files.getPublicUrl("notes/a.txt").data.publicUrl;
    expect((await fetch(publicUrl)).status).toBe(200);

    const uploadUrl = await files.createSignedUploadUrl("uploads/c.txt");
    const byUrl = await supabase()
      .storage.from(bucket)
      .uploadToSignedUrl("uploads/c.txt", uploadUrl.data!.token, text);
    expect(byUrl.error).toBeNull();

    // A 32×16 picture, resized to 8 px wide through render/image.
    const png = encode({ width: 32, height: 16, data: new Uint8Array(32 * 16 * 4).fill(200), channels: 4 });
    expect((await files.upload("pics/p.png", png, { contentType: "image/png" })).error).toBeNull();
    const small = await files.download("pics/p.png", { transform: { width: 8, format: "origin" } });
    expect(small.error).toBeNull();
    expect(imageSize(new Uint8Array(await small.data!.arrayBuffer()))).toMatchObject({ width: 8, height: 4 });

    expect((await files.remove(["uploads/c.txt"])).error).toBeNull();
    expect((await storage.emptyBucket(bucket)).error).toBeNull();
    expect((await storage.deleteBucket(bucket)).error).toBeNull();
  });
});

describe("data calls against wrangler dev, forwarded to the project", () => {
  it("from(…).select, rpc, functions.invoke and a Realtime channel, as the signed-in user", async () => {
    const { client, id } = await signedIn("sweep-data");
    const rows = await client.from("notes").select();
    expect(rows.error).toBeNull();
    expect(rows.data?.[0]).toMatchObject({ title: `a note of ${id}` });
    const called = await client.rpc("hello", { name: "sweep" });
    expect(called.error).toBeNull();
    const invoked = await client.functions.invoke("echo", { body: { ping: 1 } });
    expect(invoked.error).toBeNull();

    const joined = await new Promise<string>((resolve, reject) => {
      const channel = client.channel("room-1");
      const timer = setTimeout(() => reject(new Error("no SUBSCRIBED within 10 s")), 10_000);
      channel.subscribe((status) => {
        if (status === "SUBSCRIBED") {
          clearTimeout(timer);
          resolve(status);
          void client.removeChannel(channel);
        }
      });
    });
    expect(joined).toBe("SUBSCRIBED");
  });
});
