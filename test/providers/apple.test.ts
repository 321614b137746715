// Sign in with Apple through the redirect flow: the client secret is an ES256 JWT the service signs with the team's
// key, the callback comes as a cross-site form post, the name arrives once in the post's `user` field, and Apple's
// `email_verified` is the string "true".
import { env } from "cloudflare:test";
import { exportJWK, exportPKCS8, generateKeyPair } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { sessionFromRefresh, uniqueEmail } from "../helpers";
import { location, openIn, startAt, withProviders } from "./support";

const keys = await generateKeyPair("ES256", { extractable: true });
const svc = withProviders({
  AUTH_PROVIDER_APPLE_ENABLED: "true",
  AUTH_PROVIDER_APPLE_CLIENT_ID: "com.example.web",
  AUTH_PROVIDER_APPLE_TEAM_ID: "TEAM123456",
  AUTH_PROVIDER_APPLE_KEY_ID: "KEY1234567",
  AUTH_PROVIDER_APPLE_PRIVATE_KEY: await exportPKCS8(keys.privateKey),
  AUTH_PROVIDER_APPLE_AUTHORIZATION_URL: "https://apple.fake/auth/authorize",
  AUTH_PROVIDER_APPLE_TOKEN_URL: "https://apple.fake/auth/token",
  AUTH_PROVIDER_APPLE_JWKS_URL: "https://apple.fake/jwks",
  AUTH_PROVIDER_APPLE_ISSUER: "https://apple.fake",
});

beforeAll(async () => {
  await env.OUTBOUND!.fetch("https://apple.fake/__key", {
    method: "POST",
    body: JSON.stringify(await exportJWK(keys.publicKey)),
  });
});

describe("Sign in with Apple", () => {
  it("posts back, signs the user up with the name from the first post, and verifies the secret JWT at Apple", async () => {
    const email = uniqueEmail("apple");
    const { atProvider: start, cookie } = await startAt(svc, "apple", { state: "s1" });
    expect(start.searchParams.get("response_mode")).toBe("form_post");
    start.searchParams.set("fake_id", `apple-${crypto.randomUUID()}`);
    start.searchParams.set("fake_email", email);
    const { action, fields } = (await (await env.OUTBOUND!.fetch(start.toString())).json()) as {
      action: string;
      fields: Record<string, string>;
    };
    const posted = await svc.request("POST", action, {
      body: new URLSearchParams(fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: "https://apple.fake" },
    });
    // The cross-site post carries no SameSite=Lax cookie: it is passed on to the GET callback, which the browser
    // opens as a top-level navigation, with its cookie.
    expect(posted.status).toBe(303);
    expect(posted.headers.getSetCookie()).toEqual([]);
    const asGet = location(posted);
    expect(`${asGet.origin}${asGet.pathname}`).toBe(action);
    expect(Object.fromEntries(asGet.searchParams)).toEqual(fields);
    const inAnotherBrowser = location(await openIn(svc, asGet));
    expect(inAnotherBrowser.searchParams.get("error")).toBe("invalid-state");
    const back = location(await openIn(svc, asGet, cookie));
    expect(back.searchParams.get("state")).toBe("s1");
    const session = await sessionFromRefresh(svc, back.searchParams.get("refreshToken")!);
    expect(session.user).toMatchObject({ email, emailVerified: true, displayName: "Ada Lovelace" });

    const secrets = (await (await env.OUTBOUND!.fetch("https://apple.fake/__secrets")).json()) as {
      header: { alg: string; kid: string };
      claims: { iss: string; sub: string; aud: string };
    }[];
    expect(secrets.at(-1)).toMatchObject({
      header: { alg: "ES256", kid: "KEY1234567" },
      claims: { iss: "TEAM123456", sub: "com.example.web", aud: "https://appleid.apple.com" },
    });
  });
});
