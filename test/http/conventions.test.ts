import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp } from "../helpers";

describe("HTTP conventions", () => {
  const svc = service({
    ...NO_VERIFICATION,
    AUTH_ACCESS_CONTROL_ALLOWED_REDIRECT_URLS: "https://app.example.com/cb,myapp://x",
  });

  it("CORS allows the client URL and redirect origins with credentials, and no one else", async () => {
    const preflight = await svc.request("OPTIONS", "/signin/email-password", {
      headers: { origin: "https://app.example.com", "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(preflight.headers.get("access-control-allow-credentials")).toBe("true");

    const fromClient = await svc.request("GET", "/healthz", { headers: { origin: "http://localhost:3000" } });
    expect(fromClient.headers.get("access-control-allow-origin")).toBe("http://localhost:3000");

    const stranger = await svc.request("GET", "/healthz", { headers: { origin: "https://evil.example" } });
    expect(stranger.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("AUTH_CORS_ORIGINS replaces the default origins", async () => {
    const custom = service({ AUTH_CORS_ORIGINS: "https://only.example" });
    const response = await custom.request("GET", "/healthz", {
      headers: { origin: "http://localhost:3000" },
    });
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const allowed = await custom.request("GET", "/healthz", { headers: { origin: "https://only.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://only.example");
  });

  it("token answers are no-store, the JWKS is briefly cacheable, every answer has a request id", async () => {
    const session = await signUp(svc);
    const user = await svc.get("/user", session.accessToken);
    expect(user.headers.get("cache-control")).toBe("no-store");
    const jwks = await svc.get("/.well-known/jwks.json");
    expect(jwks.headers.get("cache-control")).toBe("public, max-age=300");
    expect(user.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(jwks.headers.get("x-request-id")).not.toBe(user.headers.get("x-request-id"));
  });

  it("public endpoints ignore a stale bearer token", async () => {
    const stale = "eyJhbGciOiJSUzI1NiJ9.eyJleHAiOjF9.c2ln";
    for (const path of ["/healthz", "/version", "/.well-known/jwks.json"]) {
      expect((await svc.get(path, stale)).status, path).toBe(200);
    }
    const session = await signUp(svc);
    const refreshed = await svc.post("/token", { refreshToken: session.refreshToken }, stale);
    expect(refreshed.status).toBe(200);
  });

  it("a bad configuration answers 500 in the standard shape without internals", async () => {
    const broken = service({
      AUTH_PASSWORD_MIN_LENGTH: "nine",
      AUTH_SERVER_URL: "https://auth.example.com/auth/v1",
    });
    const response = await broken.get("/healthz");
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(JSON.parse(body)).toEqual({
      status: 500,
      message: "internal server error",
      error: "internal-server-error",
    });
    expect(body).not.toContain("AUTH_PASSWORD_MIN_LENGTH");
  });
});
