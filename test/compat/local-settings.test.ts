// The compatibility server reads no local settings: `wrangler dev` is started by test/compat/wrangler-dev.ts with an
// env file of its own, so a developer's .dev.vars or .env, wrangler.toml's [vars], PORT or the process environment
// change nothing it answers. The workers pool's side is test/local-settings.test.ts. CI runs both under a hostile
// .dev.vars (.ci/hostile.dev.vars: every URL elsewhere, sign-up off, a 45-character password minimum, no mailbox),
// PORT=8799 and development [vars] (.ci/run), in place of a second run of the whole suite.
// Threat: real-client tests that pass or fail by what the developer last ran with `npm start`.
import { describe, expect, inject, it } from "vitest";
import { authUrl, latestMail, PASSWORD, serverUrl, uniqueEmail } from "./client";

const started = inject("serverVars");

describe("the compatibility server's settings", () => {
  it("answers at the suite's URLs, on the port the suite chose, whatever PORT says", async () => {
    expect(serverUrl).toBe(`http://127.0.0.1:${started.port}`);
    expect(started).toMatchObject({
      AUTH_SERVER_URL: `${serverUrl}/auth/v1`,
      STORAGE_SERVER_URL: serverUrl,
      AUTH_CLIENT_URL: "http://localhost:3000",
    });
    const discovery = await fetch(`${authUrl}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const metadata = (await discovery.json()) as { issuer: string; jwks_uri: string };
    expect(metadata.issuer).toBe(authUrl);
    expect(metadata.jwks_uri.startsWith(`${authUrl}/`)).toBe(true);
    const auth = (await (await fetch(`${authUrl}/openapi.json`)).json()) as { servers: { url: string }[] };
    expect(auth.servers).toEqual([{ url: authUrl }]);
    const storage = (await (await fetch(`${serverUrl}/storage/v1/openapi.json`)).json()) as {
      servers: { url: string }[];
    };
    expect(storage.servers).toEqual([{ url: `${serverUrl}/storage/v1` }]);
  });

  it("signs up with the suite's settings: sign-up open, the default password policy, mail to the dev mailbox", async () => {
    const email = uniqueEmail("local-settings");
    const signedUp = await fetch(`${authUrl}/signup/email-password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signedUp.status).toBe(200);
    // The link goes to this server, and back to the suite's AUTH_CLIENT_URL when the app named no redirect.
    const link = new URL(/(http\S+\/verify\?\S+)/.exec((await latestMail(email)).text)![1]!);
    expect(`${link.origin}${link.pathname}`).toBe(`${authUrl}/verify`);
    expect(link.searchParams.get("redirectTo")).toBe("http://localhost:3000");
  });
});
