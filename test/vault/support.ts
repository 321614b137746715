// Shared by the token vault's tests: a service with the fake Google of test/fakes/outbound.js, the vault on with an
// extra scope, the OAuth2 server on; an agent (an OAuth2 client allowed Google); a user's connection made the way a
// browser makes it (the app's POST, the start URL, the provider, the callback); and the agent's exchange.
import { env } from "cloudflare:test";
import { expect } from "vitest";
import type { WireClient } from "../../src/oauth2/clients";
import type { TestService, WireSession } from "../helpers";
import {
  basic,
  codeFor,
  exchange,
  newClient,
  PROVIDER_ON,
  postForm,
  REDIRECT_URI,
  s256,
  VERIFIER,
} from "../oauth2/support";
import {
  APP,
  answerQuestion,
  cookiesOf,
  FAKE_PROVIDERS,
  type FakeUser,
  location,
  openIn,
} from "../providers/support";

export const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";
export const ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token";
export const CALENDAR = "https://www.googleapis.com/auth/calendar.readonly";

export const VAULT_ON = {
  ...FAKE_PROVIDERS,
  ...PROVIDER_ON,
  AUTH_TOKEN_VAULT_ENABLED: "true",
  AUTH_PROVIDER_GOOGLE_VAULT_SCOPES: CALENDAR,
  AUTH_PROVIDER_GOOGLE_REVOCATION_URL: "https://oidc.fake/revoke",
};

/** An agent: a confidential client that may exchange tokens, allowed Google's tokens by an admin. */
export const agent = (svc: TestService, body: Record<string, unknown> = {}) =>
  newClient(svc, {
    clientName: "Calendar agent",
    grantTypes: ["authorization_code", "refresh_token", TOKEN_EXCHANGE],
    vaultProviders: ["google"],
    ...body,
  });

/** A fake Google account no other test uses (the fake counts refreshes and revocations per account). */
export const googleAccount = (extra: FakeUser & { fake_expires_in?: string } = {}) => ({
  fake_id: `g-${crypto.randomUUID()}`,
  fake_email: `${crypto.randomUUID().slice(0, 8)}@gmail.example`,
  ...extra,
});

/**
 * The app asks for a connection; its browser opens the start URL and the person says yes to the question
 * (src/providers/ask-first.ts): where that sends it, and the browser's cookie.
 */
export async function startConnection(
  svc: TestService,
  session: WireSession,
  body: Record<string, unknown> = {},
) {
  const asked = await svc.post("/user/connections/google", { redirectTo: APP, ...body }, session.accessToken);
  expect(asked.status).toBe(200);
  const { url } = (await asked.json()) as { url: string };
  const start = await openIn(svc, url);
  const cookie = cookiesOf(start);
  return { url, atProvider: location(await answerQuestion(svc, start, cookie)), cookie };
}

/** The whole trip in one browser, the person consenting at the fake Google; returns where the browser lands. */
export async function connect(
  svc: TestService,
  session: WireSession,
  person: Record<string, string>,
  clientIds: string[] = [],
) {
  const { atProvider, cookie } = await startConnection(svc, session, { clientIds });
  for (const [name, value] of Object.entries(person)) atProvider.searchParams.set(name, value);
  const callback = location(await env.OUTBOUND!.fetch(atProvider.toString(), { redirect: "manual" }));
  return { atProvider, callback, cookie, landing: location(await openIn(svc, callback, cookie)) };
}

/** The user's access token for `client`, through the code flow (issued to that client). */
export async function userTokenFor(
  svc: TestService,
  client: WireClient,
  session: WireSession,
  extra: Record<string, string> = {},
) {
  const { code } = await codeFor(svc, client, session, {
    scope: "openid profile",
    code_challenge: await s256(VERIFIER),
    code_challenge_method: "S256",
  });
  // `dpop`: a proof for the token endpoint, so the token is bound to its key (RFC 9449 §5).
  const { dpop, ...values } = extra;
  const answer = dpop
    ? await postForm(
        svc,
        "/oauth2/token",
        {
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: VERIFIER,
          ...values,
        },
        { ...basic(client), dpop },
      )
    : await exchange(svc, client, code, { code_verifier: VERIFIER, ...values });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** The agent's exchange of a user's token for the provider's (RFC 8693). */
export const exchangeForGoogle = (
  svc: TestService,
  client: WireClient,
  subjectToken: string,
  values: Record<string, string | undefined> = {},
  headers: Record<string, string> = {},
) =>
  postForm(
    svc,
    "/oauth2/token",
    {
      grant_type: TOKEN_EXCHANGE,
      subject_token: subjectToken,
      subject_token_type: ACCESS_TOKEN,
      requested_token_type: ACCESS_TOKEN,
      audience: "provider:google",
      ...values,
    },
    { ...basic(client), ...headers },
  );

/** What the fake Google counted for an account: refreshes made, tokens revoked (RFC 7009). */
export async function countsAtGoogle(fakeId: string): Promise<{ refreshes: number; revocations: number }> {
  return (await env.OUTBOUND!.fetch(`https://oidc.fake/__counts?user=${encodeURIComponent(fakeId)}`)).json();
}

/** Takes the fake Google down (or back up) for one account's refreshes. */
export const googleDown = (fakeId: string, down: boolean) =>
  env.OUTBOUND!.fetch(`https://oidc.fake/__down?user=${encodeURIComponent(fakeId)}`, {
    method: down ? "POST" : "DELETE",
  });
