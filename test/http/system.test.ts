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

  // Threat: /healthz is answered before the app (src/http/bare-answers.ts, issue 48); if its headers drifted from the
  // app's chain, a browser app would lose CORS on it or a cache would keep it. Compared with an answer the chain
  // gives under the same prefix (a 404), header for header, for an allowed origin, a stranger and none.
  it("GET and HEAD /healthz carry the chain's headers: CORS, no-store, Vary, the request id", async () => {
    const values = (response: Response) =>
      Object.fromEntries(
        [...response.headers].filter(([name]) => !["content-length", "x-request-id"].includes(name)),
      );
    for (const origin of ["http://localhost:3000", "https://evil.example", undefined]) {
      const headers: Record<string, string> = origin ? { origin } : {};
      const bare = await svc.request("GET", "/healthz", { headers });
      const chain = await svc.request("GET", "/no-such-route", { headers });
      expect(chain.status).toBe(404);
      expect(values(bare), String(origin)).toEqual(values(chain));
      const head = await svc.request("HEAD", "/healthz", { headers });
      expect(values(head)).toEqual(values(chain));
    }
    const fromClient = await svc.request("GET", "/healthz", { headers: { origin: "http://localhost:3000" } });
    expect(fromClient.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");
    expect(fromClient.headers.get("cache-control")).toBe("no-store");
    expect(fromClient.headers.get("vary")).toBe("Origin");
    const ray = await svc.request("GET", "/healthz", { headers: { "cf-ray": "8f0c1d2e3a4b5c6d-FRA" } });
    expect(ray.headers.get("x-request-id")).toBe("8f0c1d2e3a4b5c6d-FRA");
    expect((await svc.get("/healthz")).headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // Spelled otherwise, the path goes through the app, which answers the same.
    expect(await (await svc.get("/healthz?probe=1")).json()).toBe("OK");
    expect(await (await svc.get("/%68ealthz")).json()).toBe("OK");
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
