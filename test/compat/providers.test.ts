// The main provider journey through the real client against `wrangler dev`: the app builds the URL with
// `signInProviderURL`, the browser goes to the (fake, loopback) GitHub and back, and the app exchanges the
// `refreshToken` it receives; then it reads the provider's tokens once, and links a second identity with `connect`.
import { describe, expect, it } from "vitest";
import { client, REDIRECT, uniqueEmail } from "./client";

/**
 * The browser's part: follow each redirect, acting as the person at the provider with `person`, and sending back to
 * the service the cookie it set at the start (the flow is bound to the browser that started it).
 */
async function browse(start: string, person: Record<string, string>): Promise<URL> {
  const toProvider = await fetch(start, { redirect: "manual" });
  expect(toProvider.status).toBe(302);
  const cookie = toProvider.headers
    .getSetCookie()
    .map((line) => line.split(";")[0])
    .join("; ");
  const atProvider = new URL(toProvider.headers.get("location")!);
  for (const [name, value] of Object.entries(person)) atProvider.searchParams.set(name, value);
  const toCallback = await fetch(atProvider, { redirect: "manual" });
  expect(toCallback.status).toBe(302);
  const toApp = await fetch(toCallback.headers.get("location")!, { redirect: "manual", headers: { cookie } });
  expect(toApp.status).toBe(302);
  return new URL(toApp.headers.get("location")!);
}

describe("@nhost/nhost-js with a GitHub-like provider", () => {
  it("signs up through signInProviderURL, refreshes into a session, reads the provider tokens once", async () => {
    const nhost = client();
    const email = uniqueEmail("github");
    const id = String(Math.floor(Math.random() * 1e12));
    const url = nhost.auth.signInProviderURL("github", {
      redirectTo: REDIRECT,
      metadata: { source: "github" },
      state: "app-state",
    } as never);
    const back = await browse(url, { fake_id: id, fake_email: email });
    expect(back.searchParams.get("errorDescription")).toBeNull();
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    expect(back.searchParams.get("state")).toBe("app-state");
    const refreshToken = back.searchParams.get("refreshToken")!;
    const { body: session } = await nhost.auth.refreshToken({ refreshToken });
    nhost.sessionStorage.set(session);
    const { body: user } = await nhost.auth.getUser();
    expect(user).toMatchObject({
      email,
      emailVerified: true,
      displayName: "Octo Cat",
      metadata: { source: "github" },
    });

    const { body: tokens } = await nhost.auth.getProviderTokens("github");
    expect(tokens.accessToken).toMatch(/^access-/);
    const { body: again } = await nhost.auth.getProviderTokens("github");
    expect(again.accessToken).toBe("");

    // The same GitHub account again is the same user.
    const second = await browse(nhost.auth.signInProviderURL("github", { redirectTo: REDIRECT }), {
      fake_id: id,
    });
    const { body: secondSession } = await client().auth.refreshToken({
      refreshToken: second.searchParams.get("refreshToken")!,
    });
    expect(secondSession.user?.id).toBe(user.id);
  });
});
