import { and, eq, gt, inArray, isNotNull, isNull } from "drizzle-orm";
import { base64url } from "jose";
import { oauth2Codes, oauth2Grants } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { OAuth2Error } from "./errors";
import { forgetPendingRequest, type PendingRequest } from "./pending-requests";
import { authorizationResponse } from "./redirects";
import { AUTHORIZATION_CODE_PREFIX } from "./token-prefixes";

/** Contract §3.5: codes live five minutes. */
const CODE_LIFETIME_MS = 5 * 60 * 1000;

export type CodeRow = typeof oauth2Codes.$inferSelect;

/** `oac_` + 256 random bits in base64url: anything else is no code of ours, refused before a hash or a read. */
const CODE_SHAPE = new RegExp(`^${AUTHORIZATION_CODE_PREFIX}[A-Za-z0-9_-]{43}$`);

/**
 * Completes a pending request for `userId`: a code bound to the client, redirect URI, PKCE challenge, nonce,
 * scopes, user and `authTime`, stored as SHA-256. The insert is the single-use check of the request: its
 * `request_id` is unique, so of two completions (two tabs, a double click, a replay of the login call) one gets a
 * code. Returns where to send the browser.
 */
export async function issueCode(
  deps: Deps,
  request: PendingRequest,
  userId: string,
  authTime: number,
): Promise<string> {
  const code = `${AUTHORIZATION_CODE_PREFIX}${base64url.encode(crypto.getRandomValues(new Uint8Array(32)))}`;
  const inserted = await deps.db
    .insert(oauth2Codes)
    .values({
      codeHash: await sha256Hex(code),
      requestId: request.id,
      clientId: request.clientId,
      userId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge ?? null,
      nonce: request.nonce ?? null,
      scopes: request.scopes,
      resources: request.resources,
      authTime,
      expiresAt: deps.now() + CODE_LIFETIME_MS,
    })
    .onConflictDoNothing({ target: oauth2Codes.requestId })
    .returning({ codeHash: oauth2Codes.codeHash })
    .get();
  if (!inserted) throw new AppError("invalid-request", "this authorization request was completed already");
  deps.background(forgetPendingRequest(deps.env, request.id));
  return authorizationResponse(deps.config, request.redirectUri, { code, state: request.state });
}

/**
 * Takes a code for the grant `grantId` with one conditional UPDATE (unused and unexpired, or nothing): two
 * exchanges racing with the same code cannot both win. A code that was used before and already started a grant is
 * a replay, which RFC 6749 §4.1.2 and RFC 9700 §4.2.4 answer by revoking what it issued: the grant goes, with its
 * refresh tokens, and its access tokens turn inactive. A second exchange racing the first one's own few
 * milliseconds finds no grant yet and is only refused, so that of two parallel exchanges one succeeds.
 */
export async function consumeCode(deps: Deps, code: string, grantId: string): Promise<CodeRow> {
  const invalid = new OAuth2Error("invalid_grant", "the code is invalid, expired or used");
  if (!CODE_SHAPE.test(code)) throw invalid;
  const codeHash = await sha256Hex(code);
  const { db } = deps;
  const taken = await db
    .update(oauth2Codes)
    .set({ usedAt: deps.now(), grantId })
    .where(
      and(
        eq(oauth2Codes.codeHash, codeHash),
        isNull(oauth2Codes.usedAt),
        gt(oauth2Codes.expiresAt, deps.now()),
      ),
    )
    .returning()
    .get();
  if (taken) return taken;
  const used = and(eq(oauth2Codes.codeHash, codeHash), isNotNull(oauth2Codes.usedAt));
  const revoked = await db
    .delete(oauth2Grants)
    .where(inArray(oauth2Grants.id, db.select({ id: oauth2Codes.grantId }).from(oauth2Codes).where(used)))
    .returning({ id: oauth2Grants.id, userId: oauth2Grants.userId, clientId: oauth2Grants.clientId })
    .get();
  if (revoked) {
    deps.audit({
      type: "oauth2.grant-revoked",
      userId: revoked.userId,
      detail: { grantId: revoked.id, clientId: revoked.clientId, reason: "code-replayed" },
    });
    throw new OAuth2Error(
      "invalid_grant",
      "the code was used before; the tokens issued from it are revoked",
      undefined,
      `authorization code replayed; grant ${revoked.id} revoked`,
    );
  }
  throw invalid;
}
