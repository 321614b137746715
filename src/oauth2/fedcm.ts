import { and, eq } from "drizzle-orm";
import { signInFor } from "../browser/step-up";
import { oauth2Consents } from "../db/schema";
import type { Deps } from "../http/deps";
import { refuseWhileImpersonating } from "../http/impersonation";
import { CODE_CHALLENGE_PATTERN } from "../lib/pkce";
import { findOAuth2Client } from "./clients";
import { mintCode } from "./codes";
import { grantedConsent, rememberConsent } from "./consents";
import { OAuth2Error } from "./errors";
import type { Completer } from "./interaction";
import { scopeList } from "./params";
import { newRequestId, type PendingRequest } from "./pending-requests";

/**
 * What the FedCM identity provider (src/fedcm/) asks of the authorization server: the client a relying party's page
 * names, the clients a user let in already, and the ID assertion, which is an authorization code of this server for
 * that client, exchanged at `/oauth2/token` like any other (PKCE through the RP's `params`). The browser's own prompt
 * ("Continue as …", with the client's policy and terms when the account is new to it) stands in for the consent page.
 */

/** What the FedCM endpoints show of a client: its name and links, nothing of its settings. */
export interface FedCmClient {
  clientId: string;
  clientName: string;
  policyUri: string | null;
  tosUri: string | null;
  /** Whether it may be sent codes without PKCE: a confidential client, which proves itself at the token endpoint. */
  confidential: boolean;
}

/**
 * The client `clientId` names when `origin` (the `Origin` the browser sent, W3C FedCM §4) is one of its FedCM origins
 * and it may use codes; undefined otherwise, whichever of these failed, so that a caller cannot tell a client that
 * exists from one that does not.
 */
export async function fedcmClient(
  deps: Deps,
  clientId: string,
  origin: string | undefined,
): Promise<FedCmClient | undefined> {
  if (!origin || !clientId || clientId.length > 200) return undefined;
  const client = await findOAuth2Client(deps, clientId);
  if (!client?.fedcmOrigins.includes(origin) || !client.grantTypes.includes("authorization_code"))
    return undefined;
  return {
    clientId: client.clientId,
    clientName: client.clientName,
    policyUri: client.policyUri,
    tosUri: client.tosUri,
    confidential: client.tokenEndpointAuthMethod !== "none",
  };
}

/** The clients `userId` consented to (W3C FedCM §6.2 `approved_clients`): the browser's "returning user". */
export async function consentedClients(deps: Deps, userId: string): Promise<string[]> {
  const rows = await deps.shards
    .ofUser(userId)
    .select({ clientId: oauth2Consents.clientId })
    .from(oauth2Consents)
    .where(eq(oauth2Consents.userId, userId))
    .limit(100)
    .all();
  return rows.map((row) => row.clientId);
}

/** FedCM's disconnect (W3C FedCM §6.5): the user's consent to the client is forgotten; false when there was none. */
export async function forgetConsent(deps: Deps, userId: string, clientId: string): Promise<boolean> {
  const gone = await deps.shards
    .ofUser(userId)
    .delete(oauth2Consents)
    .where(and(eq(oauth2Consents.userId, userId), eq(oauth2Consents.clientId, clientId)))
    .returning({ clientId: oauth2Consents.clientId })
    .get();
  if (gone) deps.audit({ type: "oauth2.consent-revoked", userId, detail: { clientId } });
  return Boolean(gone);
}

/** What the relying party asked, from the ID assertion request (`nonce`, and its `params`). */
export interface FedCmAsk {
  nonce?: string;
  /** RFC 7636 S256 challenge; required of a public client. */
  codeChallenge?: string;
  codeChallengeMethod?: string;
  /** Space-separated; default `openid profile email`, narrowed to the client's scopes. */
  scope?: string;
  /** W3C FedCM §6.4 `disclosure_text_shown`: the browser showed the client's policy and terms. */
  disclosureShown: boolean;
}

const DEFAULT_SCOPES = ["openid", "profile", "email"];

/**
 * The ID assertion (W3C FedCM §6.4): a code for `client`, bound to the user signed in to this browser and the way
 * they signed in (`acr`, `amr`, `auth_time`, `sid`), to the nonce and the PKCE challenge, with no redirect URI (the
 * token request names none). The scopes the user has not let the client have are allowed by this prompt only when
 * the browser showed its disclosure (the client's terms and policy); otherwise `access_denied`.
 */
export async function issueFedCmCode(
  deps: Deps,
  client: FedCmClient,
  completer: Completer,
  ask: FedCmAsk,
): Promise<string> {
  refuseWhileImpersonating(completer.actor, "authorizing a client");
  const challenge = ask.codeChallenge;
  if (challenge !== undefined) {
    if ((ask.codeChallengeMethod ?? "S256") !== "S256") {
      throw new OAuth2Error("invalid_request", "code_challenge_method must be S256");
    }
    if (!CODE_CHALLENGE_PATTERN.test(challenge))
      throw new OAuth2Error("invalid_request", "code_challenge is malformed");
  } else if (!client.confidential) {
    throw new OAuth2Error("invalid_request", "a public client must use PKCE (code_challenge in params)");
  }
  if (ask.nonce !== undefined && ask.nonce.length > 512) {
    throw new OAuth2Error("invalid_request", "nonce is longer than 512 characters");
  }
  const row = await findOAuth2Client(deps, client.clientId);
  if (!row) throw new OAuth2Error("unauthorized_client", "the client no longer exists");
  const asked = ask.scope === undefined ? DEFAULT_SCOPES : scopeList(ask.scope);
  const scopes = asked.filter((scope) => row.scopes.includes(scope));
  if (scopes.length === 0) throw new OAuth2Error("invalid_scope", "none of these scopes is the client's");
  const granted = (await grantedConsent(deps, completer.userId, client.clientId)).scopes;
  const unasked = scopes.filter((scope) => !granted.includes(scope));
  if (unasked.length > 0) {
    if (!ask.disclosureShown) {
      throw new OAuth2Error("access_denied", "the browser did not show the disclosure for a new consent");
    }
    // Its code names no resource (the client itself is the audience): nothing to add to the resources allowed.
    await rememberConsent(deps, completer.userId, client.clientId, { scopes, resources: [] });
  }
  const now = deps.now();
  const request: PendingRequest = {
    id: newRequestId(),
    clientId: client.clientId,
    redirectUri: "",
    scopes,
    resources: [],
    prompt: [],
    uiLocales: [],
    createdAt: now,
    ...(ask.nonce !== undefined ? { nonce: ask.nonce } : {}),
    ...(challenge !== undefined ? { codeChallenge: challenge } : {}),
  };
  const signIn = signInFor(completer.times, {}, completer.sid);
  return mintCode(deps, request, completer.userId, signIn);
}
