import { decodeJwt } from "jose";
import { describe, expect, inject, it } from "vitest";
import type { Seen } from "../../fakes/supabase-upstream";
import { UPSTREAM_ANON_KEY, UPSTREAM_JWT_SECRET } from "../../fakes/supabase-upstream";
import { signUp, uniqueEmail } from "../../helpers";
import { grantFor } from "../../oauth2/support";
import { uniquePhone } from "../../support/phones";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The data calls of supabase-js forwarded to the project (contract supabase.md §4), against a fake project on loopback
 * (test/fakes/supabase-upstream.ts) that checks each call's token as PostgREST does: HS256 under the project's secret,
 * then `role` and `sub`. Each test names the supabase-js method it proves (postgrest-js's `from().select()` and
 * `rpc`, functions-js's `invoke`).
 */

const UPSTREAM = inject("upstreamUrl");

const svc = supabaseService({
  OUTBOUND: undefined,
  AUTH_OUTBOUND_ALLOW_LOCAL: "true",
  AUTH_SUPABASE_UPSTREAM_URL: UPSTREAM,
  AUTH_SUPABASE_UPSTREAM_JWT_SECRET: UPSTREAM_JWT_SECRET,
  AUTH_SUPABASE_UPSTREAM_ANON_KEY: UPSTREAM_ANON_KEY,
  // The authorization server, for an OAuth2 client's token to be refused.
  AUTH_OAUTH2_PROVIDER_ENABLED: "true",
  // A phone factor, for a Nhost-face session stepped up by a texted code.
  AUTH_MFA_ENABLED: "true",
  AUTH_DEV_SMS: "true",
});

async function signedIn() {
  const supabase = supabaseClient(svc);
  const { data, error } = await supabase.auth.signUp({
    email: uniqueEmail("fwd"),
    password: "correct horse battery",
  });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return { supabase, session: data.session };
}

/** A forwarded call as a client sends it, with what the face answers. */
const call = (path: string, headers: Record<string, string>, method = "GET", body?: string) =>
  svc.request(method, `${FACE}${path}`, { headers, body });

describe("forwarded data calls: the token exchanged", () => {
  it("from().select() as a signed-in user: the upstream sees the same person, under the project's secret", async () => {
    const { supabase, session } = await signedIn();
    const { data, error, status } = await supabase.from("todos").select("id,title").eq("done", false);
    expect(error).toBeNull();
    expect(status).toBe(200);
    const seen = (data as unknown as Seen[])[0]!;
    const presented = decodeJwt(session.access_token);
    expect(seen.path).toBe("/rest/v1/todos");
    expect(new URLSearchParams(seen.search).get("done")).toBe("eq.false");
    // The claims RLS reads through auth.uid() and auth.jwt(), the same as the face's token says.
    expect(seen.claims).toMatchObject({
      sub: presented.sub,
      role: "authenticated",
      aud: "authenticated",
      session_id: presented.session_id,
      aal: "aal1",
      amr: presented.amr,
      app_metadata: presented.app_metadata,
      user_metadata: presented.user_metadata,
      email: presented.email,
      iss: `${UPSTREAM}/auth/v1`,
    });
    expect(seen.header).toEqual({ alg: "HS256", typ: "JWT" });
    const claims = seen.claims as { iat: number; exp: number };
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(300);
    // Threat: the face's keys and the service's own claims reaching a third party. The upstream gets its anon key,
    // and none of what the caller sent this service as credentials.
    expect(seen.apikey).toBe(UPSTREAM_ANON_KEY);
    expect(JSON.stringify(seen.headers)).not.toContain(PUBLISHABLE_KEY);
    expect(seen.claims).not.toHaveProperty("https://hasura.io/jwt/claims");
  });

  it("rpc and functions.invoke carry the body both ways, as the same user", async () => {
    const { supabase, session } = await signedIn();
    const sub = decodeJwt(session.access_token).sub;
    const rpc = await supabase.rpc("add_todo", { title: "milk" });
    expect(rpc.error).toBeNull();
    expect(rpc.data).toMatchObject({ method: "POST", path: "/rest/v1/rpc/add_todo", claims: { sub } });
    expect(JSON.parse((rpc.data as Seen).body)).toEqual({ title: "milk" });

    const invoked = await supabase.functions.invoke("hello-world", { body: { name: "Functions" } });
    expect(invoked.error).toBeNull();
    expect(invoked.data).toMatchObject({
      path: "/functions/v1/hello-world",
      claims: { sub, role: "authenticated" },
    });
    expect(JSON.parse((invoked.data as Seen).body)).toEqual({ name: "Functions" });
  });

  it("a token of the Nhost face is exchanged too, with GoTrue's claims from its session", async () => {
    const session = await signUp(svc);
    const response = await call(
      "/graphql/v1",
      { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${session.accessToken}` },
      "POST",
      "{}",
    );
    expect(response.status).toBe(200);
    const seen = (await response.json()) as Seen;
    expect(seen.claims).toMatchObject({
      sub: session.user.id,
      role: "authenticated",
      aud: "authenticated",
      session_id: decodeJwt(session.accessToken).sid,
      aal: "aal1",
      amr: [{ method: "password", timestamp: expect.any(Number) }],
      app_metadata: { provider: "email", providers: ["email"] },
    });
  });

  it("a Nhost-face session stepped up by a texted code goes as aal2, as the face's own token says", async () => {
    // Threat: an RLS policy that asks `auth.jwt()->>'aal' = 'aal2'` refusing (or, the other way, a policy trusting
    // aal1) a user who showed their phone factor: the level must follow how the session began, whichever factor.
    const { supabase } = await signedIn();
    const email = (await supabase.auth.getUser()).data.user!.email!;
    const phone = uniquePhone();
    const enrolled = await supabase.auth.mfa.enroll({ factorType: "phone", phone });
    const challenge = await supabase.auth.mfa.challenge({ factorId: enrolled.data!.id });
    const texted = async () => {
      const texts = (await (await svc.get(`/dev/sms?to=${encodeURIComponent(phone)}`)).json()) as {
        body: string;
      }[];
      return /\b(\d{6})\b/.exec(texts[0]!.body)![1]!;
    };
    const verified = await supabase.auth.mfa.verify({
      factorId: enrolled.data!.id,
      challengeId: challenge.data!.id,
      code: await texted(),
    });
    expect(verified.error).toBeNull();
    const first = (await (
      await svc.post("/signin/email-password", { email, password: "correct horse battery" })
    ).json()) as { mfa: { ticket: string } };
    const stepped = await svc.post("/signin/mfa/totp", { ticket: first.mfa.ticket, otp: await texted() });
    expect(stepped.status).toBe(200);
    const { session } = (await stepped.json()) as { session: { accessToken: string } };
    const response = await call(
      "/graphql/v1",
      { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${session.accessToken}` },
      "POST",
      "{}",
    );
    expect(((await response.json()) as Seen).claims).toMatchObject({
      aal: "aal2",
      amr: [{ method: "mfa/phone", timestamp: expect.any(Number) }],
    });
  });

  it("no user token goes as anon; only the secret key goes as service_role", async () => {
    const anon = await supabaseClient(svc).from("notes").select();
    expect((anon.data as unknown as Seen[])[0]!.claims).toMatchObject({ role: "anon", iss: "supabase" });
    expect((anon.data as unknown as Seen[])[0]!.claims).not.toHaveProperty("sub");

    const admin = await supabaseClient(svc, SECRET_KEY).from("notes").select();
    expect((admin.data as unknown as Seen[])[0]!.claims).toMatchObject({ role: "service_role" });

    // Threat: a user token sent with a secret key in `apikey` borrowing the service role. The user token decides.
    const { session } = await signedIn();
    const mixed = await call("/rest/v1/notes", {
      apikey: SECRET_KEY,
      authorization: `Bearer ${session.access_token}`,
    });
    expect(((await mixed.json()) as Seen[])[0]!.claims).toMatchObject({ role: "authenticated" });
  });

  it("what is not a live first-party session token gets GoTrue's 401, and nothing goes upstream", async () => {
    const { supabase, session } = await signedIn();
    // Threat: a token of a signed-out session still used on the data API.
    await supabase.auth.signOut();
    const ended = await call("/rest/v1/todos", {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${session.access_token}`,
    });
    expect(ended.status).toBe(401);
    expect(await ended.json()).toMatchObject({ code: 401, error_code: "no_authorization" });

    // Threat: a token signed by anyone else (here, with the project's own secret) passed off as the service's.
    const forged = await call("/rest/v1/todos", {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${session.access_token.split(".").slice(0, 2).join(".")}.AAAA`,
    });
    expect(forged.status).toBe(401);
    // Threat: an OAuth2 client's access token (a third party's, for scopes its user granted it) taken upstream as the
    // user's own session, with everything RLS lets that user do.
    const { tokens } = await grantFor(svc);
    const client = await call("/rest/v1/todos", {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${tokens.access_token}`,
    });
    expect(client.status).toBe(401);
    expect(client.headers.get("x-sb-error-code")).toBe("no_authorization");
    // A key where a token goes must be the key of `apikey` again.
    const otherKey = await call("/rest/v1/todos", {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${SECRET_KEY}`,
    });
    expect(otherKey.status).toBe(401);
    // No key, a wrong key: the face's own refusals.
    expect((await call("/rest/v1/todos", {})).status).toBe(401);
    expect((await call("/rest/v1/todos", { apikey: "sb_publishable_wrongwrongwrongwrong" })).status).toBe(
      401,
    );
  });
});

describe("forwarded data calls: the path and the headers", () => {
  it("Realtime's REST side (channel.send before a join posts to realtime/v1/api/broadcast) goes as the same user", async () => {
    const { session } = await signedIn();
    const response = await call(
      "/realtime/v1/api/broadcast",
      {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${session.access_token}`,
        "content-type": "application/json",
      },
      "POST",
      JSON.stringify({ messages: [{ topic: "room", event: "hi", payload: {} }] }),
    );
    expect(await response.json()).toMatchObject({
      path: "/realtime/v1/api/broadcast",
      claims: { sub: decodeJwt(session.access_token).sub, role: "authenticated" },
    });
  });

  it("a browser's preflight allows PostgREST's headers, and the count in Content-Range is readable", async () => {
    const preflight = await call(
      "/rest/v1/todos",
      {
        origin: "http://localhost:3000",
        "access-control-request-method": "GET",
        "access-control-request-headers": "apikey,authorization,prefer,range,accept-profile",
      },
      "OPTIONS",
    );
    const allowed = preflight.headers.get("access-control-allow-headers") ?? "";
    for (const header of ["prefer", "range", "accept-profile"]) expect(allowed).toContain(header);
    const answer = await call("/rest/v1/todos", { origin: "http://localhost:3000", apikey: PUBLISHABLE_KEY });
    expect(answer.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(answer.headers.get("access-control-expose-headers")).toContain("content-range");
  });

  it("encoded separators and dot-segments are refused with 400, never forwarded", async () => {
    const headers = { apikey: PUBLISHABLE_KEY };
    // Threat: climbing out of rest/v1 into another API of the project once the upstream decodes the path.
    for (const path of [
      "/rest/v1/..%2F..%2Fauth%2Fv1%2Fadmin%2Fusers",
      "/rest/v1/%2e%2e%2fauth",
      "/functions/v1/a%5C..%5Cb",
      "/rest/v1/todos%2F..",
      "/rest/v1/a%00b",
    ]) {
      const response = await call(path, headers);
      expect(response.status, path).toBe(400);
      expect(await response.json(), path).toMatchObject({ code: "bad_path", details: null, hint: null });
    }
    const decoded = await call("/rest/v1/caf%C3%A9%20menu", headers);
    expect(((await decoded.json()) as Seen[])[0]!.path).toBe("/rest/v1/caf%C3%A9%20menu");
  });

  it("the caller's cookies, credentials and hop-by-hop headers stay here; the upstream's cookies do not come back", async () => {
    const response = await call("/rest/v1/todos?apikey=leak&select=id", {
      apikey: PUBLISHABLE_KEY,
      cookie: "nhostSession=secret",
      "x-hasura-admin-secret": "nope",
      connection: "x-private",
      "x-private": "hop",
      prefer: "count=exact",
    });
    expect(response.headers.get("set-cookie")).toBeNull();
    const seen = ((await response.json()) as Seen[])[0]!;
    expect(seen.search).toBe("?select=id");
    expect(seen.headers).not.toHaveProperty("cookie");
    expect(seen.headers).not.toHaveProperty("x-hasura-admin-secret");
    expect(seen.headers).not.toHaveProperty("x-private");
    expect(seen.headers.prefer).toBe("count=exact");
  });
});
