import { env } from "cloudflare:test";
import { decodeProtectedHeader } from "jose";
import { describe, expect, it, onTestFinished, vi } from "vitest";
import type { AdminKey } from "../../src/admin/wire";
import { expectError, NO_VERIFICATION, PASSWORD, SERVER, service, signUp } from "../helpers";
import { provider } from "../oauth2/support";

const svc = service(NO_VERIFICATION);
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string) => svc.request(method, `/admin${path}`, { headers: ADMIN });

async function listKeys(): Promise<AdminKey[]> {
  const response = await admin("GET", "/keys");
  expect(response.status).toBe(200);
  return ((await response.json()) as { items: AdminKey[] }).items;
}

async function rotate(): Promise<AdminKey> {
  const response = await admin("POST", "/keys/rotate");
  expect(response.status).toBe(201);
  return (await response.json()) as AdminKey;
}

const kidOf = (token: string) => decodeProtectedHeader(token).kid;
const jwksKids = async () =>
  ((await (await svc.get("/.well-known/jwks.json")).json()) as { keys: { kid: string }[] }).keys.map(
    (k) => k.kid,
  );

describe("admin API: signing keys", () => {
  it("rotates without a restart: new tokens carry the new kid, old tokens still verify, the JWKS has both", async () => {
    const before = await signUp(svc);
    const [configured] = await listKeys();
    expect(configured).toMatchObject({ status: "signing", source: "config", createdAt: null });
    expect(kidOf(before.accessToken)).toBe(configured!.kid);

    const rotated = await rotate();
    expect(rotated).toMatchObject({ status: "signing", source: "admin", kty: "RSA", alg: "RS256" });
    const after = await signUp(svc);
    expect(kidOf(after.accessToken)).toBe(rotated.kid);
    // A service instance that cached the key set before the rotation (another isolate) verifies the new kid too.
    expect((await svc.get("/user", after.accessToken)).status).toBe(200);
    expect((await service(NO_VERIFICATION).get("/user", after.accessToken)).status).toBe(200);
    expect((await svc.get("/user", before.accessToken)).status).toBe(200);
    expect(await jwksKids()).toEqual(expect.arrayContaining([configured!.kid, rotated.kid]));
    const statuses = Object.fromEntries((await listKeys()).map((key) => [key.kid, key.status]));
    expect(statuses).toMatchObject({ [configured!.kid]: "published", [rotated.kid]: "signing" });

    // Stored encrypted: the private exponent is nowhere in the row.
    const row = await env.DB.prepare("SELECT private_jwk_sealed AS sealed FROM signing_keys WHERE kid = ?")
      .bind(rotated.kid)
      .first<{ sealed: string }>();
    expect(row!.sealed).not.toContain('"d"');
    expect(row!.sealed).toMatch(/^[0-9a-z.]+$/);
  });

  // Threat: a leaked signing key; after rotating and deleting it, nothing it signed may be accepted.
  it("deletes a retired key: its tokens stop verifying; the signing key, configured keys and unknown kids are refused", async () => {
    const first = await rotate();
    const signedByFirst = await signUp(svc);
    expect(kidOf(signedByFirst.accessToken)).toBe(first.kid);
    await expectError(await admin("DELETE", `/keys/${first.kid}`), 400, "invalid-request");
    const second = await rotate();
    // Its tokens may still be valid: refused, saying until when, unless forced (after a leak).
    const early = await expectError(await admin("DELETE", `/keys/${first.kid}`), 400, "invalid-request");
    expect(early.message).toMatch(/may be valid until \d{4}-\d{2}-\d{2}T/);
    expect((await admin("DELETE", `/keys/${first.kid}?force=true`)).status).toBe(204);
    await expectError(await svc.get("/user", signedByFirst.accessToken), 401, "unauthorized");
    expect(await jwksKids()).not.toContain(first.kid);
    // The user signs in again and gets a token of the current key.
    const again = await svc.post("/signin/email-password", {
      email: signedByFirst.user.email,
      password: PASSWORD,
    });
    const { session } = (await again.json()) as { session: { accessToken: string } };
    expect(kidOf(session.accessToken)).toBe(second.kid);

    const configured = (await listKeys()).find((key) => key.source === "config")!;
    await expectError(await admin("DELETE", `/keys/${configured.kid}`), 400, "invalid-request");
    await expectError(await admin("DELETE", "/keys/no-such-kid"), 404, "not-found");
    const events = (
      (await (
        await svc.request("GET", "/admin/audit?type=admin.keys.rotate", { headers: ADMIN })
      ).json()) as {
        items: { detail: { kid: string } }[];
      }
    ).items.map((event) => event.detail.kid);
    expect(events).toEqual(expect.arrayContaining([first.kid, second.kid]));
  });

  it("deletes a retired key without force once no token it signed can be valid: the longest lifetime, OAuth2 clients' too", async () => {
    const retiring = await rotate();
    await rotate();
    // An OAuth2 client whose access tokens live 24 h makes that the wait.
    const client = await svc.request("POST", "/admin/oauth2/clients", {
      headers: ADMIN,
      json: {
        clientName: "Long-lived",
        redirectUris: ["https://rp.example.com/cb"],
        accessTokenLifetime: 86_400,
      },
    });
    expect(client.status).toBe(201);
    vi.useFakeTimers({ toFake: ["Date"] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    vi.setSystemTime(Date.now() + 3_600_000);
    await expectError(await admin("DELETE", `/keys/${retiring.kid}`), 400, "invalid-request");
    vi.setSystemTime(Date.now() + 86_400_000);
    expect((await admin("DELETE", `/keys/${retiring.kid}`)).status).toBe(204);
  });

  // Threat: algorithm confusion while keys of two algorithms are published (each kid verifies only its own alg:
  // test/lib/signing-algorithms.test.ts); users signed in before the switch must stay signed in.
  it("switches the deployment to EdDSA: new tokens EdDSA, sessions from before keep working, ID tokens stay RS256", async () => {
    const rsa = await rotate();
    const before = await signUp(svc);
    const switched = await svc.request("POST", "/admin/keys/rotate", {
      headers: ADMIN,
      json: { alg: "EdDSA" },
    });
    expect(switched.status).toBe(201);
    const ed = (await switched.json()) as AdminKey;
    expect(ed).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", status: "signing" });
    expect(ed).not.toHaveProperty("d");

    const after = await signUp(svc);
    expect(decodeProtectedHeader(after.accessToken)).toMatchObject({ alg: "EdDSA", kid: ed.kid });
    expect((await svc.get("/user", after.accessToken)).status).toBe(200);
    expect((await svc.get("/user", before.accessToken)).status).toBe(200);
    const refreshed = await svc.post("/token", { refreshToken: before.refreshToken });
    expect(decodeProtectedHeader(((await refreshed.json()) as { accessToken: string }).accessToken).alg).toBe(
      "EdDSA",
    );
    const jwks = (await (await svc.get("/.well-known/jwks.json")).json()) as {
      keys: { kid: string; kty: string }[];
    };
    expect(jwks.keys).toEqual(expect.arrayContaining([expect.objectContaining({ kid: ed.kid, kty: "OKP" })]));
    // The newest RSA key signs ID tokens now and cannot be deleted, even with force.
    const listed = await listKeys();
    expect(listed.find((key) => key.kid === rsa.kid)).toMatchObject({
      status: "published",
      signsIdTokens: true,
    });
    await expectError(await admin("DELETE", `/keys/${rsa.kid}?force=true`), 400, "invalid-request");
    const discovery = (await (await provider().get("/.well-known/openid-configuration")).json()) as Record<
      string,
      unknown
    >;
    expect(discovery.id_token_signing_alg_values_supported).toEqual(["RS256"]);

    await expectError(
      await svc.request("POST", "/admin/keys/rotate", { headers: ADMIN, json: { alg: "HS256" } }),
      400,
      "invalid-request",
    );
    // Back to RS256 for the tests after this one.
    expect((await rotate()).alg).toBe("RS256");
  });

  it("rotates to the algorithm picked in the console's form", async () => {
    const origin = new URL(SERVER).origin;
    const post = (path: string, values: Record<string, string>, cookie?: string) =>
      svc.request("POST", `/admin/console${path}`, {
        body: new URLSearchParams(values).toString(),
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          origin,
          ...(cookie ? { cookie } : {}),
        },
      });
    const login = await post("/login", { secret: String(env.AUTH_ADMIN_SECRET) });
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await svc.request("GET", "/admin/console/keys", { headers: { cookie } })).text();
    expect(page).toContain('<option value="EdDSA">EdDSA</option>');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
    expect((await post("/keys/rotate", { csrf, alg: "ES256" }, cookie)).status).toBe(303);
    const signing = (await listKeys()).find((key) => key.status === "signing")!;
    expect(signing).toMatchObject({ alg: "ES256", kty: "EC", crv: "P-256" });
    expect(decodeProtectedHeader((await signUp(svc)).accessToken).alg).toBe("ES256");
    expect((await rotate()).alg).toBe("RS256");
  });

  it("asks the admin secret", async () => {
    await expectError(await svc.get("/admin/keys"), 401, "unauthorized");
    await expectError(await svc.request("POST", "/admin/keys/rotate"), 401, "unauthorized");
    await expectError(await svc.request("DELETE", "/admin/keys/x"), 401, "unauthorized");
  });
});
