// @edge-auth/hono off Cloudflare (packages/hono/src/remote.ts): a Hono app that verifies the service's tokens itself
// with jose against the service's JWKS, every fetch of it going to the Worker under test over its HTTP surface.
// Threats: a token of another kind passed off as a session's (an OAuth2 token for some API, a DPoP-bound token sent
// as Bearer, a forged one); an app believing it refuses ended sessions when nothing off Cloudflare can tell it.
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthEnv,
  auth,
  EdgeAuthError,
  requirePermission,
  requireUser,
} from "../../../packages/hono/src/index";
import { fetchThrough, supabaseClient, supabaseService } from "../../faces/supabase/support";
import { decodeJwt, SERVER, signUp } from "../../helpers";
import { basic, newClient, postForm } from "../../oauth2/support";
import { makeEditor, useExamplePolicies } from "./support";

const ISSUER = `${SERVER}/auth/v1`;
const API = "https://api.example.com";
const svc = supabaseService({ AUTH_OAUTH2_PROVIDER_ENABLED: "true", AUTH_OAUTH2_PROVIDER_RESOURCES: API });

function app(options: Partial<Parameters<typeof auth>[0]> = {}, live = false) {
  return new Hono<AuthEnv>()
    .use(auth({ issuer: ISSUER, fetch: fetchThrough(svc), ...options }))
    .get("/me", requireUser({ live }), (c) => c.json(c.var.identity))
    .post("/verify", async (c) =>
      c.json(await c.var.auth.verifyToken(await c.req.text(), { audience: API })),
    );
}

const bearer = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

describe("@edge-auth/hono off Cloudflare: tokens verified with the service's JWKS", () => {
  it("knows a session's user from its token; refuses none, garbage and a forged signature with 401", async () => {
    const session = await signUp(svc);
    const ok = await app().request("/me", bearer(session.accessToken));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      source: "token",
      face: "nhost",
      user: { id: session.user.id, roles: expect.arrayContaining(["user"]), defaultRole: "user" },
      session: { id: decodeJwt(session.accessToken).payload.sid, live: false },
      credential: "access-token",
    });
    const [header, payload] = session.accessToken.split(".");
    for (const token of [undefined, "garbage", `${header}.${payload}.${"A".repeat(86)}`]) {
      const refused = await app().request("/me", token ? bearer(token) : {});
      expect(refused.status, String(token)).toBe(401);
      expect(refused.headers.get("www-authenticate")).toBe("Bearer");
      expect(refused.headers.get("cache-control")).toBe("no-store");
      expect(await refused.json()).toEqual({
        status: 401,
        error: "unauthorized",
        message: "missing or invalid access token",
      });
    }
  });

  it("refuses an OAuth2 token meant for an API as a session, and verifyToken takes it for its audience", async () => {
    const machine = await newClient(svc, { grantTypes: ["client_credentials"], redirectUris: [] });
    const answer = await postForm(
      svc,
      "/oauth2/token",
      { grant_type: "client_credentials", resource: API },
      basic(machine),
    );
    const { access_token } = (await answer.json()) as { access_token: string };
    expect((await app().request("/me", bearer(access_token))).status).toBe(401);
    const verdict = await app().request("/verify", { method: "POST", body: access_token });
    expect(await verdict.json()).toMatchObject({ active: true, userId: machine.clientId });
    const other = await app().request("/verify", { method: "POST", body: "garbage" });
    expect(await other.json()).toMatchObject({ active: false, reason: expect.any(String) });
  });

  it("accepts the Supabase face's tokens only when its issuer is named", async () => {
    const client = supabaseClient(svc);
    const { data } = await client.auth.signUp({
      email: `hono-${crypto.randomUUID()}@example.com`,
      password: "correct horse battery",
    });
    const token = data.session!.access_token;
    expect((await app().request("/me", bearer(token))).status).toBe(401);
    const face = await app({ supabaseIssuer: `${SERVER}/supabase/auth/v1` }).request("/me", bearer(token));
    expect(face.status).toBe(200);
    expect(await face.json()).toMatchObject({
      source: "token",
      face: "supabase",
      user: { id: data.user!.id, defaultRole: "authenticated" },
      claims: { email: data.user!.email },
      session: { id: expect.any(String), live: false },
    });
  });

  it("says `live` needs the binding rather than pretend a session is alive", async () => {
    const session = await signUp(svc);
    const answer = await app({}, true).request("/me", bearer(session.accessToken));
    expect(answer.status).toBe(500);
    expect(await answer.json()).toMatchObject({ error: "live-needs-binding" });
    expect(() => auth({ issuer: "not a url" })).toThrow(TypeError);
    expect(() => auth({ issuer: ISSUER, authzenUrl: SERVER })).toThrow(/clientCredentials/);
    expect(new EdgeAuthError("forbidden", "no")).toMatchObject({ status: 403, code: "forbidden" });
  });
});

// Threats: a PEP that fetches a token per decision (the token endpoint as the bottleneck, or rate-limited into
// refusals); an app that believes it sent a relationship the service did not store (AuthZEN's 400 must reach it).
describe("@edge-auth/hono off Cloudflare: permissions through the AuthZEN API", () => {
  let restore: () => Promise<void>;
  beforeAll(async () => {
    restore = await useExamplePolicies(svc);
  });
  afterAll(() => restore());

  async function pep(secret?: string) {
    const client = await newClient(svc, {
      grantTypes: ["client_credentials"],
      redirectUris: [],
      scopes: ["authzen"],
    });
    const sent: string[] = [];
    const through = fetchThrough(svc);
    const counting: typeof fetch = (input, init) => {
      sent.push(new URL(input instanceof Request ? input.url : String(input)).pathname);
      return through(input, init);
    };
    const document = (id: string) => ({ type: "Document", id });
    const app = new Hono<AuthEnv>()
      .use(
        auth({
          issuer: ISSUER,
          authzenUrl: SERVER,
          clientCredentials: { clientId: client.clientId, clientSecret: secret ?? client.clientSecret! },
          fetch: counting,
        }),
      )
      .get(
        "/documents/:id",
        requirePermission("read", (c) => document(c.req.param("id")!)),
        (c) => c.text("read"),
      )
      .put(
        "/documents/:id",
        requirePermission("edit", (c) => document(c.req.param("id")!)),
        (c) => c.text("edited"),
      )
      .post("/many/:id", requireUser(), async (c) => {
        const ask = (name: string) => ({
          subject: { type: "user", id: c.var.identity.user.id },
          action: { name },
          resource: document(c.req.param("id")!),
        });
        const semantic = c.req.query("semantic") as "execute_all" | "permit_on_first_permit";
        return c.json(await c.var.auth.checkMany([ask("edit"), ask("read")], { semantic }));
      })
      .post(
        "/claim/:id",
        requirePermission("edit", (c) => ({ ...document(c.req.param("id")!), properties: { editors: [] } })),
        (c) => c.text("claimed"),
      );
    return { app, sent };
  }

  it("allows by the role policy and the relationship, denies without, with one token for every decision", async () => {
    const { app, sent } = await pep();
    const session = await signUp(svc);
    const id = crypto.randomUUID();
    expect(await (await app.request(`/documents/${id}`, bearer(session.accessToken))).text()).toBe("read");
    const refused = await app.request(`/documents/${id}`, { method: "PUT", ...bearer(session.accessToken) });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ error: "forbidden" });
    await makeEditor(svc, id, session.user.id);
    expect(
      await (await app.request(`/documents/${id}`, { method: "PUT", ...bearer(session.accessToken) })).text(),
    ).toBe("edited");
    const many = async (semantic: string) =>
      (await (
        await app.request(`/many/${id}?semantic=${semantic}`, {
          method: "POST",
          ...bearer(session.accessToken),
        })
      ).json()) as {
        decision: boolean;
      }[];
    expect((await many("execute_all")).map((d) => d.decision)).toEqual([true, true]);
    expect((await many("permit_on_first_permit")).map((d) => d.decision)).toEqual([true]);
    expect(sent.filter((path) => path.endsWith("/oauth2/token"))).toHaveLength(1);
    expect(sent.filter((path) => path === "/access/v1/evaluation")).toHaveLength(3);
    expect(sent.filter((path) => path === "/access/v1/evaluations")).toHaveLength(2);
  });

  it("AuthZEN's 400 reaches the app as invalid-request; refused credentials are the service failing the app", async () => {
    const session = await signUp(svc);
    const { app } = await pep();
    // `editors` is a relationship the service stores for this document: a request may not send it as a property.
    const id = crypto.randomUUID();
    await makeEditor(svc, id, session.user.id);
    const claimed = await app.request(`/claim/${id}`, { method: "POST", ...bearer(session.accessToken) });
    expect(claimed.status).toBe(400);
    expect(await claimed.json()).toMatchObject({
      error: "invalid-request",
      message: expect.stringContaining("editors"),
    });
    const wrong = await pep("not the secret");
    const failed = await wrong.app.request(`/documents/${crypto.randomUUID()}`, bearer(session.accessToken));
    expect(failed.status).toBe(502);
    expect(await failed.json()).toMatchObject({ error: "client-credentials-failed" });
  });
});
