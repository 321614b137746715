// @edge-auth/hono through a real service binding (packages/hono/src/binding.ts): the app under test gets the Worker's
// own `AuthService` entrypoint as its AUTH binding (`exports.AuthService`, a loopback stub: every call crosses Workers
// RPC as a consumer Worker's does). Threats: a session signed out a moment ago still let in by a `live` guard; the
// guard consuming the request's body; a permission the policies don't give; the binding's error values lost (an
// app that can't tell a refused argument from an outage).
import { exports } from "cloudflare:workers";
import { Hono } from "hono";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AuthEnv,
  type AuthServiceBinding,
  auth,
  EdgeAuthError,
  requirePermission,
  requireUser,
} from "../../../packages/hono/src/index";
import type { AuthService } from "../../../src/runtime/entrypoints/auth-service";
import { NO_VERIFICATION, service, signUp } from "../../helpers";
import { makeEditor, useExamplePolicies } from "./support";

// The package's declaration of the binding and the service's entrypoint can't drift apart: this stops compiling.
const _conforms = (entrypoint: Pick<AuthService, "authenticate" | "verifyToken" | "getUser">) =>
  entrypoint satisfies Pick<AuthServiceBinding, "authenticate" | "verifyToken" | "getUser">;

const svc = service(NO_VERIFICATION);
const bindings = { AUTH: (exports as unknown as { AuthService: AuthServiceBinding }).AuthService };
const document = (id: string) => ({ type: "Document", id });

const app = new Hono<{ Bindings: typeof bindings } & AuthEnv>()
  .use(auth({ binding: "AUTH" }))
  .get("/me", requireUser({ live: true }), (c) => c.json(c.var.identity))
  .get("/cheap", requireUser(), (c) => c.json(c.var.identity))
  .post("/echo", requireUser({ live: true }), async (c) => c.text(await c.req.text()))
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
  .post("/verify", async (c) => c.json(await c.var.auth.verifyToken(await c.req.text())))
  .post("/check", async (c) => c.json(await c.var.auth.check(await c.req.json())))
  .post("/many/:semantic", requireUser(), async (c) => {
    const ask = (name: string, id: string) => ({
      subject: { type: "user", id: c.var.identity.user.id },
      action: { name },
      resource: document(id),
    });
    const semantic = c.req.param("semantic") as "execute_all" | "deny_on_first_deny";
    const ids = (await c.req.json()) as string[];
    return c.json(await c.var.auth.checkMany([ask("edit", ids[0]!), ask("read", ids[0]!)], { semantic }));
  })
  .onError((error, c) =>
    error instanceof EdgeAuthError
      ? c.json({ caught: error.code, status: error.status }, error.status)
      : c.json({ unexpected: String(error) }, 500),
  );

const send = (path: string, token?: string, init: RequestInit = {}) =>
  app.request(path, { ...init, headers: token ? { authorization: `Bearer ${token}` } : {} }, bindings);

let restore: () => Promise<void>;
beforeAll(async () => {
  restore = await useExamplePolicies(svc);
});
afterAll(() => restore());

describe("@edge-auth/hono through the AuthService binding", () => {
  it("requireUser({ live }) lets a session in, then refuses it as soon as it is signed out", async () => {
    const session = await signUp(svc);
    const me = await send("/me", session.accessToken);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({
      source: "binding",
      user: { id: session.user.id, defaultRole: "user" },
      session: { id: session.refreshTokenId, live: true },
      face: "nhost",
      credential: "access-token",
    });
    // The guard sends the service the request without its body: the handler still reads it whole.
    expect(await (await send("/echo", session.accessToken, { method: "POST", body: "kept" })).text()).toBe(
      "kept",
    );
    expect((await svc.post("/signout", { refreshToken: session.refreshToken })).status).toBe(200);
    // The same access token, still unexpired: refused by `live`, let in by a guard that did not ask.
    expect(await (await send("/me", session.accessToken)).json()).toEqual({
      caught: "unauthorized",
      status: 401,
    });
    expect((await send("/cheap", session.accessToken)).status).toBe(200);
    expect((await send("/me", "garbage")).status).toBe(401);
    expect((await send("/me")).status).toBe(401);
  });

  it("requirePermission: the example's role policy reads, its relationship edits, nothing else", async () => {
    const session = await signUp(svc);
    const [mine, other] = [crypto.randomUUID(), crypto.randomUUID()];
    expect(await (await send(`/documents/${mine}`, session.accessToken)).text()).toBe("read");
    const refused = await send(`/documents/${mine}`, session.accessToken, { method: "PUT" });
    expect(await refused.json()).toEqual({ caught: "forbidden", status: 403 });
    await makeEditor(svc, mine, session.user.id);
    expect(await (await send(`/documents/${mine}`, session.accessToken, { method: "PUT" })).text()).toBe(
      "edited",
    );
    expect((await send(`/documents/${other}`, session.accessToken, { method: "PUT" })).status).toBe(403);
    // No credential: 401 before any check.
    expect((await send(`/documents/${mine}`)).status).toBe(401);
  });

  it("answers come back as values, the binding's error values as typed errors; a missing binding is named", async () => {
    const session = await signUp(svc);
    expect(
      await (await send("/verify", undefined, { method: "POST", body: session.accessToken })).json(),
    ).toMatchObject({ active: true, userId: session.user.id, face: "nhost" });
    expect(
      await (await send("/verify", undefined, { method: "POST", body: "garbage" })).json(),
    ).toMatchObject({
      active: false,
    });
    // The service refuses the evaluation ({ ok: false, error: { code: "invalid-request" } }): a 400, not a 500.
    const robot = { subject: { type: "robot", id: "r2" }, action: { name: "read" }, resource: document("1") };
    const refused = await send("/check", undefined, { method: "POST", body: JSON.stringify(robot) });
    expect(await refused.json()).toEqual({ caught: "invalid-request", status: 400 });
    const unbound = await app.request("/me", {}, {});
    expect(await unbound.json()).toEqual({ caught: "binding-missing", status: 500 });
  });
});
