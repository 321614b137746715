import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/lib/crypto";
import type { WireClient } from "../../src/oauth2/clients";
import { expectError, service } from "../helpers";

const svc = service();
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const admin = (method: string, path: string, json?: unknown) =>
  svc.request(method, `/admin${path}`, { headers: ADMIN, json });

const storedHash = async (clientId: string) =>
  (await env.DB.prepare("SELECT secret_hash FROM oauth2_clients WHERE client_id = ?")
    .bind(clientId)
    .first<{ secret_hash: string | null }>())!.secret_hash;

async function create(body: Record<string, unknown>): Promise<WireClient> {
  const response = await admin("POST", "/oauth2/clients", body);
  expect(response.status).toBe(201);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return (await response.json()) as WireClient;
}

describe("admin API: the admin secret", () => {
  it("answers 401 without or with a wrong secret, and 404 everywhere when no admin secret is configured", async () => {
    await expectError(await svc.get("/admin/oauth2/clients"), 401, "unauthorized");
    await expectError(
      await svc.request("GET", "/admin/oauth2/clients", { headers: { "x-hasura-admin-secret": "wrong" } }),
      401,
      "unauthorized",
    );
    const unset = service({ AUTH_ADMIN_SECRET: undefined });
    await expectError(
      await unset.request("GET", "/admin/oauth2/clients", { headers: ADMIN }),
      404,
      "route-not-found",
    );
    // A user's access token is not an admin secret.
    await expectError(await admin("GET", "/no-such-resource"), 404, "route-not-found");
  });
});

describe("admin API: OAuth2 clients (contract §10)", () => {
  it("creates a confidential client whose secret is shown once and stored only as a hash", async () => {
    const client = await create({
      clientName: "Acme CRM",
      redirectUris: ["https://crm.example.com/callback"],
    });
    expect(client).toEqual({
      clientId: expect.stringMatching(/^oc_[A-Za-z0-9_-]{22}$/),
      clientSecret: expect.stringMatching(/^ocs_[A-Za-z0-9_-]{43}$/),
      clientName: "Acme CRM",
      redirectUris: ["https://crm.example.com/callback"],
      scopes: ["openid", "profile", "email", "offline_access"],
      grantTypes: ["authorization_code", "refresh_token"],
      tokenEndpointAuthMethod: "client_secret_basic",
      accessTokenLifetime: 900,
      refreshTokenLifetime: 2_592_000,
      applicationType: "web",
      resources: null,
      logoUri: null,
      dpopBoundAccessTokens: false,
      requirePushedAuthorizationRequests: false,
      postLogoutRedirectUris: [],
      backchannelLogoutUri: null,
      backchannelLogoutSessionRequired: false,
      // OpenID CIBA: no delivery mode, no CIBA (test/oauth2/ciba.test.ts).
      backchannelTokenDeliveryMode: null,
      backchannelClientNotificationEndpoint: null,
      backchannelOrganization: null,
      jwks: null,
      jwksUri: null,
      trustedIssuers: [],
      vaultProviders: [],
      authorizationDetailsTypes: [],
      // FedCM: no relying-party origin, so the FedCM endpoints serve it nothing (test/fedcm/).
      fedcmOrigins: [],
      policyUri: null,
      tosUri: null,
      registration: "admin",
      registeredByUserId: null,
      lastUsedAt: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(await storedHash(client.clientId)).toBe(await sha256Hex(client.clientSecret!));
    const read = (await (await admin("GET", `/oauth2/clients/${client.clientId}`)).json()) as WireClient;
    expect(read.clientSecret).toBeUndefined();
    expect(read.clientName).toBe("Acme CRM");
  });

  it("creates a public client without a secret", async () => {
    const client = await create({
      clientName: "CLI",
      redirectUris: ["http://127.0.0.1:8976/callback", "com.example.cli:/oauth"],
      tokenEndpointAuthMethod: "none",
      scopes: ["openid", "graphql"],
      grantTypes: ["authorization_code"],
      accessTokenLifetime: 300,
    });
    expect(client.clientSecret).toBeUndefined();
    expect(client).toMatchObject({ scopes: ["openid", "graphql"], accessTokenLifetime: 300 });
    expect(await storedHash(client.clientId)).toBeNull();
  });

  it("refuses bad bodies with 400 invalid-request naming the field", async () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ redirectUris: ["https://a.example/cb"] }, /^clientName/],
      [{ clientName: "x", redirectUris: [] }, /^redirectUris/],
      [{ clientName: "x", redirectUris: ["/relative"] }, /absolute URI/],
      [{ clientName: "x", redirectUris: ["https://a.example/cb#frag"] }, /fragment/],
      [{ clientName: "x", redirectUris: ["http://a.example/cb"] }, /loopback/],
      [{ clientName: "x", redirectUris: ["javascript:alert(1)"] }, /app scheme/],
      [{ clientName: "x", redirectUris: ["https://user:pw@a.example/cb"] }, /credentials/],
      [{ clientName: "x", redirectUris: ["https://a.example/cb"], scopes: ["admin"] }, /^scopes/],
      [{ clientName: "x", redirectUris: ["https://a.example/cb"], grantTypes: ["password"] }, /^grantTypes/],
      [
        {
          clientName: "x",
          redirectUris: ["https://a.example/cb"],
          tokenEndpointAuthMethod: "private_key_jwt",
        },
        // A client that proves itself with a key must name its keys.
        /^jwks: private_key_jwt needs the client's public keys/,
      ],
      [
        {
          clientName: "x",
          redirectUris: ["https://a.example/cb"],
          tokenEndpointAuthMethod: "client_secret_jwt",
        },
        /tokenEndpointAuthMethod/,
      ],
      [
        {
          clientName: "x",
          redirectUris: ["https://a.example/cb"],
          tokenEndpointAuthMethod: "private_key_jwt",
          jwks: { keys: [{ kty: "EC", crv: "P-256", x: "x", y: "y", d: "private" }] },
        },
        /keys must be public/,
      ],
      [
        {
          clientName: "x",
          redirectUris: ["https://a.example/cb"],
          backchannelLogoutUri: "http://10.0.0.1/logout",
        },
        /^backchannelLogoutUri/,
      ],
      [
        { clientName: "x", redirectUris: ["https://a.example/cb"], accessTokenLifetime: 5 },
        /accessTokenLifetime/,
      ],
      [{ clientName: "x", redirectUris: ["https://a.example/cb"], extra: true }, /extra|Unrecognized/],
    ];
    for (const [body, message] of bad) {
      const { message: said } = await expectError(
        await admin("POST", "/oauth2/clients", body),
        400,
        "invalid-request",
      );
      expect(said, JSON.stringify(body)).toMatch(message);
    }
  });

  it("lists clients in pages across a cursor boundary", async () => {
    const made = [];
    for (const name of ["page one", "page two", "page three"]) {
      made.push(await create({ clientName: name, redirectUris: ["https://p.example/cb"] }));
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = cursor ? `?limit=2&cursor=${encodeURIComponent(cursor)}` : "?limit=2";
      const page = (await (await admin("GET", `/oauth2/clients${query}`)).json()) as {
        items: WireClient[];
        nextCursor: string | null;
      };
      expect(page.items.length).toBeLessThanOrEqual(2);
      for (const item of page.items) expect(item.clientSecret).toBeUndefined();
      seen.push(...page.items.map((item) => item.clientId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(expect.arrayContaining(made.map((client) => client.clientId)));
    expect(new Set(seen).size).toBe(seen.length);
    await expectError(await admin("GET", "/oauth2/clients?cursor=bogus"), 400, "invalid-request");
    await expectError(await admin("GET", "/oauth2/clients?limit=501"), 400, "invalid-request");
  });

  it("replaces a client with PUT; becoming public drops the secret, becoming confidential makes one", async () => {
    const client = await create({ clientName: "Old", redirectUris: ["https://old.example/cb"] });
    const publicNow = (await (
      await admin("PUT", `/oauth2/clients/${client.clientId}`, {
        clientName: "New",
        redirectUris: ["https://new.example/cb"],
        tokenEndpointAuthMethod: "none",
      })
    ).json()) as WireClient;
    expect(publicNow).toMatchObject({ clientName: "New", redirectUris: ["https://new.example/cb"] });
    expect(publicNow.clientSecret).toBeUndefined();
    expect(await storedHash(client.clientId)).toBeNull();
    const confidential = (await (
      await admin("PUT", `/oauth2/clients/${client.clientId}`, {
        clientName: "New",
        redirectUris: ["https://new.example/cb"],
        tokenEndpointAuthMethod: "client_secret_post",
      })
    ).json()) as WireClient;
    expect(await storedHash(client.clientId)).toBe(await sha256Hex(confidential.clientSecret!));
    await expectError(
      await admin("PUT", `/oauth2/clients/oc_missing`, {
        clientName: "x",
        redirectUris: ["https://x.example/cb"],
      }),
      404,
      "not-found",
    );
  });

  it("rotates a secret (the old hash is gone at once) and refuses to for a public client", async () => {
    const client = await create({ clientName: "Rotating", redirectUris: ["https://r.example/cb"] });
    const rotated = (await (await admin("POST", `/oauth2/clients/${client.clientId}/secret`)).json()) as {
      clientSecret: string;
    };
    expect(rotated.clientSecret).not.toBe(client.clientSecret);
    expect(await storedHash(client.clientId)).toBe(await sha256Hex(rotated.clientSecret));
    const open = await create({
      clientName: "Public",
      redirectUris: ["https://r.example/cb"],
      tokenEndpointAuthMethod: "none",
    });
    await expectError(await admin("POST", `/oauth2/clients/${open.clientId}/secret`), 400, "invalid-request");
    await expectError(await admin("POST", "/oauth2/clients/oc_missing/secret"), 404, "not-found");
  });

  it("deletes a client: 204, then 404", async () => {
    const client = await create({ clientName: "Short-lived", redirectUris: ["https://s.example/cb"] });
    const deleted = await admin("DELETE", `/oauth2/clients/${client.clientId}`);
    expect(deleted.status).toBe(204);
    await expectError(await admin("GET", `/oauth2/clients/${client.clientId}`), 404, "not-found");
    await expectError(await admin("DELETE", `/oauth2/clients/${client.clientId}`), 404, "not-found");
  });
});
