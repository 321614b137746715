import { describe, expect, it } from "vitest";
import { decodeJwt, NO_VERIFICATION, service, signUp } from "../helpers";

describe("system endpoints", () => {
  const svc = service();

  it("GET /healthz answers the JSON string OK", async () => {
    const response = await svc.get("/healthz");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/application\/json/);
    expect(await response.json()).toBe("OK");
  });

  it("HEAD /healthz answers 200 with an empty body", async () => {
    const response = await svc.request("HEAD", "/healthz");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it("GET /version answers the package version", async () => {
    const response = await svc.get("/version");
    expect(await response.json()).toEqual({ version: expect.stringMatching(/^\d+\.\d+\.\d+$/) });
  });

  it("GET /.well-known/jwks.json publishes public keys only, and the key that signs tokens", async () => {
    const response = await svc.get("/.well-known/jwks.json");
    const { keys } = (await response.json()) as { keys: Record<string, string>[] };
    expect(keys).toHaveLength(1);
    expect(Object.keys(keys[0]!).sort()).toEqual(["alg", "e", "kid", "kty", "n", "use"]);
    expect(keys[0]).toMatchObject({ alg: "RS256", kty: "RSA", use: "sig" });
    const session = await signUp(service(NO_VERIFICATION));
    expect(decodeJwt(session.accessToken).header.kid).toBe(keys[0]!.kid);
  });

  it("unknown routes answer 404 in the standard error shape", async () => {
    const response = await svc.get("/nope");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ status: 404, error: "route-not-found" });
  });
});

// A new user runs plain `wrangler dev` on a fresh checkout: no secrets, no tables. Each answer says what to run.
describe("a service that was not set up says what to run", () => {
  it("without secrets: 500 naming the missing variable and `npm start` (on a loopback server only)", async () => {
    const bare = service({ AUTH_JWT_PRIVATE_KEYS: undefined, HASURA_GRAPHQL_JWT_SECRET: undefined });
    const response = await bare.get("/healthz");
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: string; message: string };
    expect(body.error).toBe("internal-server-error");
    expect(body.message).toContain("AUTH_JWT_PRIVATE_KEYS");
    expect(body.message).toContain("npm start");
  });

  it("without migrations: 500 saying to apply them", async () => {
    const noTables = {
      prepare: () => {
        throw new Error("D1_ERROR: no such table: users: SQLITE_ERROR");
      },
      batch: () => Promise.reject(new Error("D1_ERROR: no such table: sessions: SQLITE_ERROR")),
    };
    const unmigrated = service({ DB: noTables });
    const response = await unmigrated.post("/signin/email-password", {
      email: "a@example.com",
      password: "x",
    });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { message: string }).message).toContain("migrations");
  });
});
