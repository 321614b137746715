import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { expectError, PASSWORD, service } from "../helpers";
import { PROVIDER_ON } from "../oauth2/support";
import { APP, FAKE_PROVIDERS } from "../providers/support";
import { userD1 } from "../support/shards";
import { admin, importUsers, nhostBcrypt, nhostUser } from "./support";

/**
 * The old Nhost project's access tokens after the move (contract supabase.md §6). The threat: its HS256 key was shared
 * widely (every Hasura, every function of the old project had it), so whoever holds it can sign any token. Without
 * these rules such a token with a ten-year `exp` and no Hasura user id signed in as anyone, a disabled user included,
 * and changed the account's email (account takeover). Now: nothing before a recorded cut-over; only tokens issued no
 * later than it, short-lived, naming their user twice, for a user not disabled and unchanged since; and read-only.
 *
 * The first test must run before any cut-over is recorded in this file's database.
 */

const KEY = "an-old-nhost-project-hs256-secret-of-32+chars";
const svc = service({
  AUTH_IMPORTED_JWT_SECRET: JSON.stringify({ type: "HS256", key: KEY }),
  AUTH_MFA_ENABLED: "true",
});
const hash = await nhostBcrypt(PASSWORD);
const seconds = (ms: number) => Math.floor(ms / 1000);

interface Minted {
  iat?: number | null;
  exp?: number;
  sub?: string;
  hasuraUserId?: string | null;
  claims?: Record<string, unknown>;
}

/** A token as the old project signed them, or as anyone holding its key could. */
function oldToken(userId: string, options: Minted = {}): Promise<string> {
  const iat = options.iat === undefined ? seconds(Date.now()) - 60 : options.iat;
  const claims: Record<string, unknown> = {
    "x-hasura-allowed-roles": ["user", "me"],
    "x-hasura-default-role": "user",
    "x-hasura-user-is-anonymous": "false",
    ...options.claims,
  };
  const hasuraUserId = options.hasuraUserId === undefined ? userId : options.hasuraUserId;
  if (hasuraUserId !== null) claims["x-hasura-user-id"] = hasuraUserId;
  const jwt = new SignJWT({ "https://hasura.io/jwt/claims": claims })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(options.sub ?? userId)
    .setIssuer("hasura-auth")
    .setExpirationTime(options.exp ?? (iat ?? seconds(Date.now())) + 900);
  if (iat !== null) jwt.setIssuedAt(iat);
  return jwt.sign(new TextEncoder().encode(KEY));
}

const recordCutOver = (json: unknown = {}, headers: Record<string, string> = admin()) =>
  svc.request("POST", "/admin/import/cut-over", { json, headers });

async function movedUser() {
  const { bundle, id, email } = await nhostUser({}, hash);
  expect((await importUsers(svc, [bundle])).results[0]!.outcome).toBe("imported");
  return { id, email };
}

const refused = async (token: string) => expectError(await svc.get("/user", token), 401, "unauthorized");

describe("before the cut-over is recorded", () => {
  const warn = vi.spyOn(console, "warn");
  afterAll(() => warn.mockClear());

  it("no old token is accepted anywhere, and the log says why once", async () => {
    const { id } = await movedUser();
    await refused(await oldToken(id));
    await refused(await oldToken(id));
    const said = warn.mock.calls.map(([line]) => String(line)).filter((line) => /no cut-over/.test(line));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/npm run admin -- cut-over/);
    expect((await svc.request("GET", "/admin/import/cut-over", { headers: admin() })).status).toBe(200);
  });
});

describe("the recorded cut-over", () => {
  it("is refused in the future, for an unknown system and without the admin secret", async () => {
    await expectError(
      await recordCutOver({ at: new Date(Date.now() + 3_600_000).toISOString() }),
      400,
      "invalid-request",
    );
    await expectError(await recordCutOver({ system: "auth0" }), 400, "invalid-request");
    expect((await recordCutOver({}, {})).status).toBe(401);
  });

  it("records Supabase's too (its secret comes later) and shows both with their ceilings", async () => {
    const at = new Date(Date.now() - 600_000).toISOString();
    const recorded = await recordCutOver({ system: "supabase", at });
    expect(recorded.status).toBe(200);
    expect(await recorded.json()).toMatchObject({ system: "supabase", at, secretSet: false });
    const nhost = (await (await recordCutOver()).json()) as { at: string; acceptedUntil: string };
    expect(Date.parse(nhost.acceptedUntil) - Date.parse(nhost.at)).toBe(3_600_000);
    const shown = await svc.request("GET", "/admin/import/cut-over", { headers: admin() });
    expect(await shown.json()).toMatchObject({
      maxLifetime: 3600,
      items: [
        { system: "nhost", secretSet: true },
        { system: "supabase", at },
      ],
    });
  });
});

describe("an old token after the cut-over", () => {
  let cutOver: number;
  beforeAll(async () => {
    cutOver = Date.now();
    expect((await recordCutOver({ at: new Date(cutOver).toISOString() })).status).toBe(200);
  });
  const before = () => seconds(cutOver) - 60;

  it("issued before it, short-lived and naming its user: accepted at GET /user", async () => {
    const { id } = await movedUser();
    const me = await svc.get("/user", await oldToken(id, { iat: before() }));
    expect(me.status).toBe(200);
    expect(((await me.json()) as { id: string }).id).toBe(id);
    // A read is a read: `POST /token/verify` says it is valid.
    expect((await svc.post("/token/verify", { token: await oldToken(id, { iat: before() }) })).status).toBe(
      200,
    );
  });

  it("without iat, or issued after the cut-over: refused", async () => {
    const { id } = await movedUser();
    await refused(await oldToken(id, { iat: null, exp: before() + 900 }));
    await refused(await oldToken(id, { iat: seconds(cutOver) + 5 }));
  });

  it("made to outlast the move (a lifetime over AUTH_IMPORTED_JWT_MAX_LIFETIME, a ten-year exp): refused", async () => {
    const { id } = await movedUser();
    await refused(await oldToken(id, { iat: before(), exp: before() + 3601 }));
    await refused(await oldToken(id, { iat: before(), exp: before() + 10 * 365 * 86_400 }));
    await refused(await oldToken(id, { iat: before(), exp: before() - 1 }));
  });

  it("without x-hasura-user-id, or naming another user there: refused", async () => {
    const { id } = await movedUser();
    const other = await movedUser();
    await refused(await oldToken(id, { iat: before(), hasuraUserId: null }));
    await refused(await oldToken(id, { iat: before(), hasuraUserId: other.id }));
    await refused(await oldToken(id, { iat: before(), sub: other.id }));
  });

  it("for a user disabled here, or one that does not exist: refused", async () => {
    const { id } = await movedUser();
    await userD1(id).prepare("UPDATE users SET disabled = 1 WHERE id = ?").bind(id).run();
    await refused(await oldToken(id, { iat: before() }));
    await refused(await oldToken(crypto.randomUUID(), { iat: before() }));
  });

  // Two moved users, a password change and five requests: past 5 s on a machine also running `npm start` and four
  // Vitest lanes (the README's order), so its budget is three times that.
  it("issued before the owner changed the password or signed out everywhere here: refused", async () => {
    // The owner's remedy for a token someone else holds must reach the old system's tokens too.
    const { id, email } = await movedUser();
    const token = await oldToken(id, { iat: before() });
    expect((await svc.get("/user", token)).status).toBe(200);
    const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    const { session } = (await signIn.json()) as { session: { accessToken: string } };
    const changed = await svc.post(
      "/user/password",
      { newPassword: "a new horse battery staple" },
      session.accessToken,
    );
    expect(changed.status).toBe(200);
    await refused(token);

    const second = await movedUser();
    const held = await oldToken(second.id, { iat: before() });
    expect((await svc.get("/user", held)).status).toBe(200);
    const revoked = await svc.request("DELETE", `/admin/users/${second.id}/sessions`, { headers: admin() });
    expect(revoked.status).toBeLessThan(300);
    await refused(held);
  }, 15_000);

  it("issued before the owner made a PAT here: refused", async () => {
    const { id, email } = await movedUser();
    const token = await oldToken(id, { iat: before() });
    expect((await svc.get("/user", token)).status).toBe(200);
    const signIn = await svc.post("/signin/email-password", { email, password: PASSWORD });
    const { session } = (await signIn.json()) as { session: { accessToken: string } };
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    expect((await svc.post("/pat", { expiresAt }, session.accessToken)).status).toBe(200);
    await refused(token);
  });

  it("reads only: email, password, MFA, PAT, passkey, elevation, linking and sign-out-all answer 403", async () => {
    // The finding: `POST /user/email/change` with an old token answered 200, an account takeover.
    const { id } = await movedUser();
    const token = await oldToken(id, { iat: before() });
    const writes: [string, string, unknown?][] = [
      ["POST", "/user/email/change", { newEmail: `taken-${id.slice(0, 8)}@example.com` }],
      ["POST", "/user/password", { newPassword: "an attacker's new password" }],
      ["GET", "/mfa/totp/generate"],
      ["POST", "/user/mfa", { code: "123456", activeMfaType: "totp" }],
      ["POST", "/pat", { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }],
      ["POST", "/user/webauthn/add", {}],
      ["POST", "/elevate/webauthn", {}],
      ["POST", "/user/deanonymize", { signInMethod: "email-password", email: "x@example.com" }],
      ["POST", "/link/idtoken", { provider: "google", idToken: "x" }],
      ["DELETE", "/user/sessions"],
      ["POST", "/signout", { all: true }],
    ];
    for (const [method, path, json] of writes) {
      const answer = await svc.request(method, path, { token, json });
      const { message } = await expectError(answer, 403, "forbidden").catch((error: Error) => {
        throw new Error(`${method} ${path}: ${error.message}`);
      });
      expect(message).toBe("a token of the previous system cannot change credentials");
    }
    // Nothing changed, and reads still work.
    const me = await svc.get("/user", token);
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ id, activeMfaType: null });
    expect((await svc.get("/user/sessions", token)).status).toBe(200);
    // Sign-out by refresh token is the refresh token's doing: a client still sending the old token signs out.
    expect((await svc.post("/signout", { refreshToken: crypto.randomUUID() }, token)).status).toBe(200);
  });
});

describe("an accepted old token outside the session API's middlewares", () => {
  it("links no provider (connect), registers no OAuth2 client, approves nothing", async () => {
    const wider = service({
      ...svc.env,
      ...FAKE_PROVIDERS,
      ...PROVIDER_ON,
      AUTH_OAUTH2_PROVIDER_REGISTRATION: "authenticated",
    });
    const cutOver = Date.now();
    expect((await recordCutOver({ at: new Date(cutOver).toISOString() })).status).toBe(200);
    const { id } = await movedUser();
    const token = await oldToken(id, { iat: seconds(cutOver) - 60 });
    expect((await wider.get("/user", token)).status).toBe(200);
    // Linking an identity the holder of the old key controls would be a way back in after every remedy.
    const connect = await wider.get(
      `/signin/provider/github?redirectTo=${encodeURIComponent(APP)}&connect=${encodeURIComponent(token)}`,
    );
    expect(new URL(connect.headers.get("location")!).searchParams.get("error")).toBe("forbidden");
    const registration = await wider.request("POST", "/oauth2/register", {
      json: { client_name: "Old key's client", redirect_uris: ["http://127.0.0.1/callback"] },
      token,
    });
    expect(registration.status).toBe(403);
    // Approvals: completing an authorization for a client (consent), accepting an invitation.
    for (const [path, json] of [
      ["/oauth2/login", { requestId: "any" }],
      ["/orgs/invitations/accept", { token: "any" }],
    ] as const) {
      const approval = await wider.request("POST", path, { json, token });
      expect(approval.status, path).toBe(403);
    }
  });
});

describe("an accepted old token and storage", () => {
  const STORAGE = "http://localhost:8787/storage/v1";
  const upload = (token: string, bucket: string, role?: string) => {
    const form = new FormData();
    form.append("bucket-id", bucket);
    form.append("file[]", new Blob(["from an old token"], { type: "text/plain" }), "old.txt");
    return svc.request("POST", `${STORAGE}/files`, {
      body: form,
      token,
      headers: role ? { "x-hasura-role": role } : {},
    });
  };

  it("uploads and reads as its user, but only with roles the user has here", async () => {
    // The threat: the shared old key can sign any role (`editor`, `admin`); storage decides by role.
    const cutOver = Date.now();
    expect((await recordCutOver({ at: new Date(cutOver).toISOString() })).status).toBe(200);
    const created = await svc.request("POST", `${STORAGE}/buckets`, {
      headers: admin(),
      json: {
        id: "editors-only",
        rules: { upload: ["editor"], read: "authenticated", update: "owner", delete: "owner" },
      },
    });
    expect(created.status).toBe(201);
    const { id } = await movedUser(); // roles here: user, me
    const token = await oldToken(id, {
      iat: seconds(cutOver) - 60,
      claims: { "x-hasura-allowed-roles": ["user", "me", "editor"], "x-hasura-default-role": "editor" },
    });
    expect((await upload(token, "editors-only", "editor")).status).toBe(403);
    expect((await upload(token, "editors-only")).status).toBe(403);
    const stored = await upload(token, "default");
    expect(stored.status).toBe(201);
    const file = ((await stored.json()) as { processedFiles: { id: string; uploadedByUserId: string }[] })
      .processedFiles[0]!;
    expect(file.uploadedByUserId).toBe(id);
    expect((await svc.request("GET", `${STORAGE}/files/${file.id}`, { token })).status).toBe(200);
  });
});

describe("past the ceiling (the cut-over plus AUTH_IMPORTED_JWT_MAX_LIFETIME)", () => {
  const warn = vi.spyOn(console, "warn");
  afterAll(() => warn.mockClear());

  it("the secret stops working and the log says to remove it", async () => {
    const { id } = await movedUser();
    const at = Date.now() - 2 * 3_600_000;
    expect((await recordCutOver({ at: new Date(at).toISOString() })).status).toBe(200);
    // Even a token the rules above would take (issued before the cut-over, an hour long) — were it not past.
    await refused(await oldToken(id, { iat: seconds(at) - 60, exp: seconds(Date.now()) + 600 }));
    await refused(await oldToken(id, { iat: seconds(at) - 60, exp: seconds(at) + 3000 }));
    const said = warn.mock.calls.map(([line]) => String(line)).filter((line) => /no longer works/.test(line));
    expect(said).toHaveLength(1);
    expect(said[0]).toMatch(/remove AUTH_IMPORTED_JWT_SECRET/);
  });
});
