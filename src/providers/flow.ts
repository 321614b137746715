import { and, eq, gt, sql } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { z } from "zod";
import {
  beginSignIn,
  issueExchangeCode,
  providerMethod,
  resolveRedirectTo,
  resolveSignUpOptions,
  type SignInScope,
  type SignUpOptions,
  signUpOptionsSchema,
  startSession,
} from "../auth";
import { providerRequests, providerTokenHandoffs } from "../db/schema";
import { AppError, platformFault, UnavailableError } from "../errors";
import type { Deps } from "../http/deps";
import { actorOf, refuseWhileImpersonating } from "../http/impersonation";
import { importedSystemOf, importedTokenRefusal, verifyUserAccessToken } from "../http/imported-tokens";
import { describeIssues } from "../http/validation";
import { decrypt, encrypt, sha256Hex } from "../lib/crypto";
import { onFaultPutBack, putBackWith } from "../lib/put-back";
import { isOwnSignedRedirect, withQuery } from "../lib/redirect";
import { linkIdentity, userForProfile } from "./accounts";
import { authorizationUrl, exchangeCode, fetchProfile, ProviderStepError, type TokenSet } from "./client";
import { enabledProvider } from "./custom-endpoints";
import { type Json, obj } from "./profile";

/** The redirect flow of contract §7: to the provider and back. */

export const REQUEST_LIFETIME_MS = 10 * 60 * 1000;
/** How long the provider's tokens wait for the app's one `getProviderTokens` call. */
const HANDOFF_LIFETIME_MS = 60 * 60 * 1000;

const callbackUrl = (deps: Deps, provider: string) =>
  deps.config.urls.auth(`/signin/provider/${provider}/callback`);

const startQuery = z.object({
  redirectTo: z.string().max(2048).optional(),
  allowedRoles: z.string().max(2000).optional(),
  defaultRole: z.string().max(100).optional(),
  displayName: z.string().max(100).optional(),
  locale: z.string().max(10).optional(),
  metadata: z.string().max(16_384).optional(),
  connect: z.string().max(8192).optional(),
  state: z.string().max(1024).optional(),
  connection: z.string().max(200).optional(),
  organization: z.string().max(200).optional(),
});

/** The sign-up options as the client's URL builder sends them: lists joined by commas, metadata as JSON (client.md §13). */
function optionsOf(query: z.infer<typeof startQuery>): SignUpOptions {
  let metadata: unknown;
  if (query.metadata !== undefined) {
    try {
      metadata = JSON.parse(query.metadata);
    } catch {
      throw new AppError("invalid-request", "metadata: not JSON");
    }
  }
  const parsed = signUpOptionsSchema.safeParse({
    allowedRoles: query.allowedRoles?.split(",").filter(Boolean),
    defaultRole: query.defaultRole,
    displayName: query.displayName,
    locale: query.locale,
    // The same bounded schema as a JSON body's metadata (src/lib/json-metadata.ts): its refusal is a 4xx, not a throw.
    metadata,
    redirectTo: query.redirectTo,
  });
  if (!parsed.success) throw new AppError("invalid-request", describeIssues(parsed.error.issues));
  return parsed.data;
}

const randomToken = () => oauth.generateRandomState();

/**
 * A face's own way back (the Supabase face's `/authorize`, src/faces/supabase/): the callback answers `returnTo` with
 * a one-time exchange code (src/auth/links/exchange-codes.ts) bound to `codeChallenge` instead of a session, and the
 * face turns it into its own session. `returnTo` is the face's code's choice, never the request's: no allow-list.
 */
export interface CodeReturn {
  returnTo: string;
  /** An S256 challenge: the app's (PKCE), or the face's own for the browser that started (implicit). */
  codeChallenge: string;
  /** Scopes asked of the provider besides its configured ones (GoTrue's `scopes`). */
  scopes?: string[];
}

/** The request's sign-up options, and the challenge of a `CodeReturn` stored beside them. */
function optionsOfRequest(stored: Record<string, unknown>) {
  const { codeChallenge, ...options } = stored;
  return { options: options as SignUpOptions, codeChallenge: codeChallenge as string | undefined };
}

/**
 * Where the browser goes next, where the flow lands in the end, and the user a link flow gives the identity to (null:
 * a sign-in, or a refusal).
 */
export interface ProviderStart {
  url: string;
  returnTo: string;
  linkTo: string | null;
}

/**
 * `GET /signin/provider/{p}`: a bad `redirectTo` is a JSON 400 (there is nowhere safe to send the browser); every
 * other problem goes back to `redirectTo` as `error=…`. The state (256 random bits) is stored as a hash with the PKCE
 * verifier (sealed), the nonce, the sign-up options, `connect` and the app's `state`; the provider sees only the
 * state, the challenge and the nonce.
 */
export async function startProviderSignIn(
  deps: Deps,
  provider: string,
  rawQuery: Record<string, string>,
  /** Hash of the starting browser's binding (src/http/browser-binding.ts), required again at the callback. */
  browserHash: string,
  /**
   * The user one of the service's own pages links the identity to (the account center, whose person is signed in by
   * its cookie, not by an access token): `connect` without a token in a URL.
   */
  linkTo?: string,
  codeReturn?: CodeReturn,
): Promise<ProviderStart> {
  const parsedQuery = startQuery.safeParse(rawQuery);
  if (!parsedQuery.success) throw new AppError("invalid-request", describeIssues(parsedQuery.error.issues));
  const query = parsedQuery.data;
  // The OAuth2 page sends people here with a target the service signed for itself (identity brokering).
  const ownRedirect =
    query.redirectTo !== undefined && (await isOwnSignedRedirect(deps.config, query.redirectTo));
  const redirectTo = codeReturn
    ? codeReturn.returnTo
    : ownRedirect
      ? query.redirectTo!
      : resolveRedirectTo(deps.config, query.redirectTo);
  const fail = (error: AppError): ProviderStart => ({
    url: withQuery(redirectTo, { error: error.code, errorDescription: error.message }),
    returnTo: redirectTo,
    linkTo: null,
  });
  if (!Object.hasOwn(deps.config.providers.enabled, provider)) {
    return fail(new AppError("disabled-endpoint", `the provider ${provider} is not enabled`));
  }
  try {
    // A custom provider's endpoints (its discovery) are known only now: a failed discovery goes back as an error.
    const settings = (await enabledProvider(deps, provider))!;
    // The page's own target is no sign-up option (it is on no allow-list, and a new user's links go to the app).
    const options = optionsOf(ownRedirect ? { ...query, redirectTo: undefined } : query);
    // Checked now, so a bad option shows before the person goes to the provider.
    resolveSignUpOptions(deps.config, options, "");
    let connectUserId: string | null = linkTo ?? null;
    if (query.connect !== undefined && linkTo === undefined) {
      const auth = await verifyUserAccessToken(deps, query.connect);
      if (!auth) throw new AppError("unauthorized", "connect: not a valid access token");
      // Linking a provider is a credential: an old system's token reads only (supabase.md §6).
      if (importedSystemOf(auth)) throw importedTokenRefusal();
      refuseWhileImpersonating(actorOf(auth), "linking a provider");
      connectUserId = auth.sub;
    }
    const state = randomToken();
    const codeVerifier = settings.definition.pkce ? oauth.generateRandomCodeVerifier() : undefined;
    const nonce = settings.oidc ? oauth.generateRandomNonce() : undefined;
    await deps.db.insert(providerRequests).values({
      stateHash: await sha256Hex(state),
      provider: settings.name,
      codeVerifierSealed: codeVerifier
        ? await encrypt(deps.config.secrets.encryptionKey, codeVerifier)
        : null,
      nonce: nonce ?? null,
      redirectTo,
      options: {
        ...(options as Record<string, unknown>),
        ...(codeReturn ? { codeChallenge: codeReturn.codeChallenge } : {}),
      },
      connectUserId,
      appState: query.state ?? null,
      browserHash,
      expiresAt: deps.now() + REQUEST_LIFETIME_MS,
    });
    const scopes: Record<string, string> = codeReturn?.scopes?.length
      ? {
          scope: [...new Set([...settings.scopes, ...codeReturn.scopes])].join(
            settings.definition.scopeSeparator ?? " ",
          ),
        }
      : {};
    const workos = settings.workos && {
      ...((query.connection ?? settings.workos.connection)
        ? { connection: query.connection ?? settings.workos.connection! }
        : {}),
      ...((query.organization ?? settings.workos.organization)
        ? { organization: query.organization ?? settings.workos.organization! }
        : {}),
    };
    const url = authorizationUrl(settings, {
      redirectUri: callbackUrl(deps, settings.name),
      state,
      codeChallenge: codeVerifier ? await oauth.calculatePKCECodeChallenge(codeVerifier) : undefined,
      nonce,
      extra: { ...scopes, ...workos },
    });
    return { url, returnTo: redirectTo, linkTo: connectUserId };
  } catch (error) {
    if (error instanceof AppError && error.status < 500) return fail(error);
    throw error;
  }
}

/**
 * The pending request of a callback, taken once (of two callbacks with the same state, one finds it), and only by the
 * browser that started it: a callback URL opened in another browser finds nothing and consumes nothing.
 */
export async function takeRequest(
  deps: Deps,
  provider: string,
  state: string | undefined,
  browserHash: string | null,
) {
  if (!state || state.length > 200 || !browserHash) return undefined;
  return deps.db
    .delete(providerRequests)
    .where(
      and(
        eq(providerRequests.stateHash, await sha256Hex(state)),
        eq(providerRequests.provider, provider),
        eq(providerRequests.browserHash, browserHash),
        gt(providerRequests.expiresAt, deps.now()),
      ),
    )
    .returning()
    .get();
}

async function handOffTokens(deps: Deps, userId: string, provider: string, tokens: TokenSet): Promise<void> {
  const now = deps.now();
  const sealed = await encrypt(
    deps.config.secrets.encryptionKey,
    JSON.stringify({
      accessToken: tokens.accessToken,
      expiresIn: tokens.expiresIn ?? 0,
      expiresAt: new Date(now + (tokens.expiresIn ?? 0) * 1000).toISOString(),
      ...(tokens.refreshToken ? { refreshToken: tokens.refreshToken } : {}),
    }),
  );
  await deps.db
    .insert(providerTokenHandoffs)
    .values({ userId, provider, sealed, expiresAt: now + HANDOFF_LIFETIME_MS })
    .onConflictDoUpdate({
      target: [providerTokenHandoffs.userId, providerTokenHandoffs.provider],
      set: { sealed, expiresAt: now + HANDOFF_LIFETIME_MS },
    });
}

/**
 * The callback (GET, or POST for Apple's form_post): take the request by its state, exchange the code, read the
 * profile, find or create the user (or link the identity with `connect`), keep the provider's tokens for the app,
 * and send the browser back with `refreshToken` (or `mfaTicket` when TOTP is on) and the app's `state`.
 */
export async function finishProviderSignIn(
  scope: SignInScope,
  provider: string,
  params: Record<string, string>,
  browserHash: string | null,
): Promise<string> {
  const { deps } = scope;
  // The provider's settings before the request is spent: a fault there (a custom issuer down at its discovery once
  // its cached document is gone, the database) answers 503 with the request still in place, so the same callback
  // works when the fault has passed; taken first, that retry met `invalid-state`. Any other failure is answered below,
  // sent back to the app the request names.
  const resolving = enabledProvider(deps, provider);
  await resolving.catch((error) => {
    if (error instanceof UnavailableError || platformFault(error)) throw error;
  });
  const request = await takeRequest(deps, provider, params.state, browserHash);
  // A vault connection's request (connections.ts) completes only at its own callback: it signs no one in.
  if (!request || request.options.purpose === "connection") {
    const error = new AppError("invalid-state");
    return withQuery(deps.config.urls.defaultRedirect, {
      error: error.code,
      errorDescription: error.message,
    });
  }
  const back = (values: Record<string, string>) =>
    withQuery(request.redirectTo, { ...values, ...(request.appState ? { state: request.appState } : {}) });
  try {
    const settings = await resolving;
    if (!settings) throw new AppError("disabled-endpoint", `the provider ${provider} is not enabled`);
    if (params.error || !params.code) {
      throw new ProviderStepError(
        "oauth-provider-error",
        params.error_description ?? params.error ?? "no code",
      );
    }
    const tokens = await exchangeCode(deps, settings, {
      code: params.code,
      redirectUri: callbackUrl(deps, provider),
      codeVerifier: request.codeVerifierSealed
        ? await decrypt(deps.config.secrets.encryptionKey, request.codeVerifierSealed)
        : undefined,
      nonce: request.nonce ?? undefined,
    });
    const profile = await fetchProfile(deps, settings, tokens, appleUser(params.user));
    const method = providerMethod(provider);
    const { options, codeChallenge } = optionsOfRequest(request.options);
    // A face's flow (`CodeReturn`): a code for its session, which the face opens (GoTrue's link ends signed in too).
    const codeFor = async (userId: string) => ({
      code: await issueExchangeCode(deps, userId, codeChallenge!, { method }),
    });
    if (request.connectUserId) {
      await linkIdentity(deps, request.connectUserId, provider, profile.id);
      await handOffTokens(deps, request.connectUserId, provider, tokens);
      return back(codeChallenge ? await codeFor(request.connectUserId) : {});
    }
    // Enforced SSO (organizations.md §2): the org's emails sign in at its IdP, not here; refused before an account is
    // made or linked for the address (the session is refused again if the account's own email is another one).
    await beginSignIn(scope, { method, email: profile.email });
    const user = await userForProfile(deps, provider, profile, options, method);
    if (user.disabled) throw new AppError("disabled-user");
    await handOffTokens(deps, user.id, provider, tokens);
    if (codeChallenge) return back(await codeFor(user.id));
    const signedIn = await startSession(scope, { user, method, mfaGate: true });
    return back(
      signedIn.session
        ? { refreshToken: signedIn.session.refreshToken }
        : { mfaTicket: signedIn.mfa!.ticket },
    );
  } catch (error) {
    if (error instanceof ProviderStepError) {
      // What the provider said goes to the log; the app gets the code and a short description.
      console.warn(JSON.stringify({ level: "warn", what: error.code, provider, detail: error.detail }));
      return back({ error: error.code, errorDescription: error.detail.slice(0, 200) });
    }
    if (error instanceof AppError && error.status < 500) {
      return back({ error: error.code, errorDescription: error.message });
    }
    throw error;
  }
}

/** Apple posts the user's name once, as JSON in the `user` field of the first callback. */
function appleUser(value: string | undefined): Json {
  if (!value || value.length > 4096) return {};
  try {
    return obj(JSON.parse(value));
  } catch {
    return {};
  }
}

/** `GET /signin/provider/{p}/callback/tokens`: the tokens of the newest callback, once; then empty values. */
export async function takeProviderTokens(deps: Deps, userId: string, provider: string) {
  const sealed = await takeSealedTokens(deps, userId, provider);
  if (!sealed) return { accessToken: "", expiresIn: 0, expiresAt: "", refreshToken: null };
  return JSON.parse(await decrypt(deps.config.secrets.encryptionKey, sealed)) as Record<string, unknown>;
}

/** A hand-off as a take claimed it: its sealed tokens and its expiry, to put back as they were. */
type ClaimedHandOff = { sealed: string; expiresAt: number };

/**
 * The take of a hand-off, single use, in two statements: first a claim, which moves the row to a key of this take's
 * own (`<provider> taken <random>`: no provider's name has a space, so no take nor hand-off meets it), atomically, so
 * one of two takes at once wins; then the claimed row's delete. A fault at either (D1 may have run the statement and
 * lost its answer) puts the tokens back under the provider's key before the 503: the claimed row if it is still there,
 * else the row the claim answered. Nothing but this take can hold its claim, so the put-back never restores tokens
 * another take handed over; a newer hand-off written meanwhile wins (`ON CONFLICT DO NOTHING`). One DELETE …
 * RETURNING, whose lost answer could not tell this take's delete from another's, lost the tokens for good.
 */
async function takeSealedTokens(deps: Deps, userId: string, provider: string): Promise<string | undefined> {
  const claim = `${provider} taken ${crypto.randomUUID()}`;
  const ofClaim = and(eq(providerTokenHandoffs.userId, userId), eq(providerTokenHandoffs.provider, claim));
  let claimed: ClaimedHandOff | undefined;
  const putBack = putBackWith("provider tokens", () =>
    deps.db.batch([
      deps.db
        .insert(providerTokenHandoffs)
        .select(
          deps.db
            .select({
              userId: providerTokenHandoffs.userId,
              provider: sql<string>`${provider}`.as("provider"),
              sealed: providerTokenHandoffs.sealed,
              expiresAt: providerTokenHandoffs.expiresAt,
            })
            .from(providerTokenHandoffs)
            .where(ofClaim),
        )
        .onConflictDoNothing(),
      ...(claimed
        ? [
            deps.db
              .insert(providerTokenHandoffs)
              .values({ userId, provider, ...claimed })
              .onConflictDoNothing(),
          ]
        : []),
      deps.db.delete(providerTokenHandoffs).where(ofClaim),
    ]),
  );
  return onFaultPutBack({ putBack }, async () => {
    claimed = await deps.db
      .update(providerTokenHandoffs)
      .set({ provider: claim })
      .where(
        and(
          eq(providerTokenHandoffs.userId, userId),
          eq(providerTokenHandoffs.provider, provider),
          gt(providerTokenHandoffs.expiresAt, deps.now()),
        ),
      )
      .returning({ sealed: providerTokenHandoffs.sealed, expiresAt: providerTokenHandoffs.expiresAt })
      .get();
    if (!claimed) return undefined;
    await deps.db.delete(providerTokenHandoffs).where(ofClaim);
    return claimed.sealed;
  });
}
