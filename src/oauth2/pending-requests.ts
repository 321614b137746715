import { base64url } from "jose";
import { z } from "zod";
import type { Env } from "../env";

/**
 * An authorization request waiting for the user (contract §3.5): kept in KV for ten minutes under
 * `oauth2:request:<id>`, then gone. KV is not atomic, so it is never what makes completion single-use: the code
 * row's unique `request_id` is (src/oauth2/codes.ts).
 */
export const PENDING_REQUEST_TTL_SECONDS = 600;

const pendingRequestSchema = z.object({
  id: z.string(),
  clientId: z.string(),
  redirectUri: z.string(),
  scopes: z.array(z.string()),
  /** RFC 8707 resources the tokens will be for. */
  resources: z.array(z.string()).default([]),
  state: z.string().optional(),
  nonce: z.string().optional(),
  codeChallenge: z.string().optional(),
  /** `prompt` values (OIDC Core §3.1.2.1): none, login, consent, select_account. */
  prompt: z.array(z.string()),
  /** Seconds; the user must have signed in no longer ago than this. */
  maxAge: z.number().optional(),
  /**
   * The known `acr_values` (OIDC Core §3.1.2.1, contract §12), in order: the session must reach one
   * (src/browser/step-up.ts).
   */
  acrValues: z.array(z.string()).optional(),
  loginHint: z.string().optional(),
  /** The `sub` of a verified `id_token_hint`: the user the client believes is signed in (OIDC Core §3.1.2.1). */
  hintedUserId: z.string().optional(),
  /** `ui_locales` (OIDC Core §3.1.2.1): the languages the page should speak, in order. */
  uiLocales: z.array(z.string()).default([]),
  /** `organization`: the org (id or slug) the client asks to act in, preselected on the consent page if allowed. */
  organization: z.string().optional(),
  /**
   * A device flow's request (RFC 8628), started on the device page: approving it marks the device authorization
   * approved instead of issuing a code; there is no redirect URI (it is empty).
   */
  device: z.object({ codeHash: z.string(), userCode: z.string() }).optional(),
  /**
   * An OpenID CIBA request's approval (src/oauth2/ciba/), opened from its mail or the account center: approving it
   * marks the request approved for its poll or ping; only `userId` (the user it asks) may decide it; no redirect URI.
   */
  ciba: z
    .object({ codeHash: z.string(), userId: z.string(), bindingMessage: z.string().optional() })
    .optional(),
  /**
   * An organization invitation's request (contract organizations.md §1), started on the invitation page: after
   * sign-in the person joins the organization instead of consenting; no client, no redirect URI (both empty). Only
   * the ticket's SHA-256 is kept here, never the ticket.
   */
  invitation: z.object({ ticketHash: z.string() }).optional(),
  /**
   * A first-party app's request (contract §13, hosted pages: `GET /signin`, `/signup`, `/reset`), started by the app:
   * after sign-in the browser goes back to `redirectTo` (checked against the allow-list when saved and again when
   * completed) with a new session's `refreshToken` (none for the account center); no client, no redirect URI (both
   * empty). Completion is single-use through the JTI ledger (app-requests.ts), not through KV.
   */
  app: z.object({ redirectTo: z.string() }).optional(),
  /** RFC 9449 §10 `dpop_jkt`: the DPoP key the code will be bound to (its exchange needs a proof by it). */
  dpopJkt: z.string().optional(),
  /**
   * RFC 9396 `authorization_details`, checked against the client's types (src/oauth2/authorization-details/): shown
   * on the consent page, which they always bring up, and handed to the code.
   */
  authorizationDetails: z.array(z.looseObject({ type: z.string() })).optional(),
  createdAt: z.number(),
});

export type PendingRequest = z.infer<typeof pendingRequestSchema>;

const key = (id: string) => `oauth2:request:${id}`;

/** 256 random bits: the id is the only handle on the request until a user completes it. */
export function newRequestId(): string {
  return base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
}

export async function savePendingRequest(env: Env, request: PendingRequest): Promise<void> {
  await env.OAUTH2_REQUESTS.put(key(request.id), JSON.stringify(request), {
    expirationTtl: PENDING_REQUEST_TTL_SECONDS,
  });
}

/** The request, or null when unknown or older than ten minutes (KV's expiry is lazy, so the age is checked too). */
export async function loadPendingRequest(env: Env, id: string, now: number): Promise<PendingRequest | null> {
  if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return null;
  const stored = await env.OAUTH2_REQUESTS.get(key(id), "json");
  const parsed = pendingRequestSchema.safeParse(stored);
  if (!parsed.success) return null;
  if (now - parsed.data.createdAt > PENDING_REQUEST_TTL_SECONDS * 1000) return null;
  return parsed.data;
}

export async function forgetPendingRequest(env: Env, id: string): Promise<void> {
  await env.OAUTH2_REQUESTS.delete(key(id));
}
