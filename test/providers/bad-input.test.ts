// Hostile input at the provider endpoints: never a 5xx, always a redirect or the contract's error body.
import { describe, expect, it } from "vitest";
import { signUp } from "../helpers";
import { APP, CALLBACK, withProviders } from "./support";

const svc = withProviders({ AUTH_PROVIDER_GOOGLE_AUDIENCE: "ios-client" });
const big = "x".repeat(12_000);

describe("provider endpoints never answer 5xx", () => {
  it("the start of the redirect flow", async () => {
    const app = encodeURIComponent(APP);
    const queries = [
      "",
      `redirectTo=${app}&metadata=not-json`,
      `redirectTo=${app}&metadata=${encodeURIComponent(JSON.stringify({ a: big }))}`,
      `redirectTo=${app}&metadata=${encodeURIComponent("[".repeat(3000))}`,
      `redirectTo=${app}&allowedRoles=${big}`,
      `redirectTo=${app}&connect=${big}`,
      `redirectTo=${app}&state=${big}`,
      `redirectTo=${app}&locale=%00%01`,
      "redirectTo=javascript:alert(1)",
      `redirectTo=${big}`,
    ];
    for (const query of queries) {
      const response = await svc.get(`/signin/provider/github?${query}`);
      expect(response.status, query.slice(0, 60)).toBeLessThan(500);
      if (response.status !== 302) expect(((await response.json()) as { error: string }).error).toBeTruthy();
    }
  });

  it("the callback, by GET and by form POST", async () => {
    const queries = [
      "",
      "state=",
      `state=${big}`,
      "code=x",
      "state=x&code=y&error=access_denied",
      "state=%zz&code=%E0%A4%A",
      `user=${big}&state=x`,
    ];
    // A form post is passed on to the GET callback (303), which then refuses it like any other.
    const passedOn = async (response: Response) => {
      expect(response.status).toBe(303);
      const next = new URL(response.headers.get("location")!);
      expect(`${next.origin}${next.pathname}`).toMatch(/\/signin\/provider\/(apple|github)\/callback$/);
      return svc.request("GET", next.toString());
    };
    for (const query of queries) {
      for (const response of [
        await svc.request("GET", `${CALLBACK("github")}?${query}`),
        await passedOn(
          await svc.request("POST", CALLBACK("apple"), {
            body: query,
            headers: { "content-type": "application/x-www-form-urlencoded" },
          }),
        ),
        await passedOn(
          await svc.request("POST", CALLBACK("github"), {
            body: "{}",
            headers: { "content-type": "application/json" },
          }),
        ),
      ]) {
        expect(response.status, query.slice(0, 40)).toBe(302);
        expect(new URL(response.headers.get("location")!).searchParams.get("error")).toBe("invalid-state");
      }
    }
  });

  it("the token, provider-token and ID-token operations", async () => {
    const session = await signUp(svc);
    const bodies = [
      "{",
      "[]",
      "null",
      JSON.stringify({ refreshToken: 7 }),
      JSON.stringify({ refreshToken: big }),
      JSON.stringify({ provider: "google", idToken: big }),
      JSON.stringify({ provider: "google", idToken: "a.b.c", nonce: 5 }),
    ];
    for (const path of ["/token/provider/github", "/signin/idtoken", "/signup/idtoken", "/link/idtoken"]) {
      for (const body of bodies) {
        const response = await svc.request("POST", path, {
          body,
          headers: { "content-type": "application/json", authorization: `Bearer ${session.accessToken}` },
        });
        expect(response.status, `${path} ${body.slice(0, 30)}`).toBeGreaterThanOrEqual(400);
        expect(response.status, `${path} ${body.slice(0, 30)}`).toBeLessThan(500);
        expect(await response.json()).toMatchObject({ error: expect.any(String), status: response.status });
      }
    }
    const tokens = await svc.get("/signin/provider/%zz/callback/tokens", session.accessToken);
    expect(tokens.status).toBeLessThan(500);
  });
});
