// The main provider journey through the real client against `wrangler dev`: the app builds the URL with
// `signInProviderURL`, the browser goes to the (fake, loopback) GitHub and back, and the app exchanges the
// `refreshToken` it receives; then it reads the provider's tokens once, and links a second identity with `connect`.
import { describe, expect, it } from "vitest";
import { browse, client, REDIRECT, uniqueEmail } from "./client";

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
