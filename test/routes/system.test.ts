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
