import * as oidc from "openid-client";

/**
 * Asking the user by OpenID CIBA (docs/agents.md): the auth service mails them and lists the request in their
 * account center; they approve or deny on its page; this side polls the token endpoint with openid-client until they
 * decided or the request expired.
 */

export interface ApprovalSettings {
  /** The auth service's issuer, e.g. https://auth.example.com/auth/v1. */
  issuer: string;
  /** A confidential client an admin allowed CIBA in poll mode. */
  clientId: string;
  clientSecret: string;
}

export type Approval =
  | { approved: true; userId: string; accessToken: string }
  | { approved: false; reason: "denied" | "expired" };

/** The client's configuration from the issuer's discovery document; plain http only for a local server. */
export async function approvalClient(settings: ApprovalSettings): Promise<oidc.Configuration> {
  const local = /^http:\/\/(localhost|127\.0\.0\.1)(:\d+)?\//.test(`${settings.issuer}/`);
  return oidc.discovery(
    new URL(settings.issuer),
    settings.clientId,
    undefined,
    oidc.ClientSecretBasic(settings.clientSecret),
    local ? { execute: [oidc.allowInsecureRequests] } : undefined,
  );
}

/**
 * The binding message the user sees quoted on the approval page and the agent shows beside it: the service takes
 * 1–64 letters, digits, spaces and basic punctuation, so anything else the tool was given is dropped here.
 */
export function bindingMessage(text: string): string {
  const kept = text.replace(/[^\p{L}\p{M}\p{N} .,:;!?'"()\-_/#&+@%*€$£¥=]/gu, "").replace(/\s+/g, " ");
  return kept.trim().slice(0, 64).trim() || "Approve the request";
}

/** Asks `user` (an email address or user id) and waits for their decision. */
export async function askApproval(
  config: oidc.Configuration,
  user: string,
  message: string,
  options: { expiresIn?: number; signal?: AbortSignal } = {},
): Promise<Approval> {
  const request = await oidc.initiateBackchannelAuthentication(config, {
    scope: "openid",
    login_hint: user,
    binding_message: bindingMessage(message),
    requested_expiry: String(options.expiresIn ?? 300),
  });
  try {
    const tokens = await oidc.pollBackchannelAuthenticationGrant(config, request, undefined, {
      signal: options.signal,
    });
    return { approved: true, userId: String(tokens.claims()?.sub ?? ""), accessToken: tokens.access_token };
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError && error.error === "access_denied") {
      return { approved: false, reason: "denied" };
    }
    if (error instanceof oidc.ResponseBodyError && error.error === "expired_token") {
      return { approved: false, reason: "expired" };
    }
    throw error;
  }
}
