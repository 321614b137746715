import { and, eq, gt, inArray, isNotNull, isNull, lt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { base64url } from "jose";
import type { Db } from "../db/client";
import { oauth2Codes, oauth2Grants } from "../db/schema";
import { type Shards, SLOTS, slotOfUser } from "../db/shards";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { randomUuid, sha256Hex } from "../lib/crypto";
import { onFaultPutBack, type PutBack, putBackWith } from "../lib/put-back";
import { OAuth2Error } from "./errors";
import { newGrantId } from "./grants";
import { forgetPendingRequest, type PendingRequest } from "./pending-requests";
import { authorizationResponse } from "./redirects";
import { AUTHORIZATION_CODE_PREFIX, GRANT_ID_PREFIX } from "./token-prefixes";
import type { SignIn } from "./tokens";

/** Contract §3.5: codes live five minutes. */
const CODE_LIFETIME_MS = 5 * 60 * 1000;

export type CodeRow = typeof oauth2Codes.$inferSelect;

/**
 * `oac_` + the user's slot (three hex digits: the shard of the code's row, src/db/shards.ts) + 256 random bits in
 * base64url. Codes from before the slot (`oac_` + 43 characters, five minutes at most) are in the home database,
 * which is every user's with one shard. Anything else is no code of ours, refused before a hash or a read.
 */
const CODE_SHAPE = new RegExp(`^${AUTHORIZATION_CODE_PREFIX}(?:([0-9a-f]{3}))?[A-Za-z0-9_-]{43}$`);

const slotHex = (slot: number) => slot.toString(16).padStart(3, "0");

/** The shard a code's row is in, and the slot to mint its grant's id with; undefined for no code of ours. */
function placeOfCode(shards: Shards, code: string): { db: Db; slot?: number } | undefined {
  const match = CODE_SHAPE.exec(code);
  if (!match) return undefined;
  if (match[1] === undefined) return shards.count === 1 ? { db: shards.home } : undefined;
  const slot = Number.parseInt(match[1], 16);
  return slot < SLOTS ? { db: shards.ofSlot(slot), slot } : undefined;
}

/**
 * Completes a pending request for `userId`: a code bound to the client, redirect URI, PKCE challenge, nonce,
 * scopes, user and sign-in (when, how, which browser session), stored as SHA-256. The insert is the single-use check of the request: its
 * `request_id` is unique, so of two completions (two tabs, a double click, a replay of the login call) one gets a
 * code. `orgId` is the organization the user picked, which the caller checked against their active memberships.
 * Returns where to send the browser.
 */
export async function issueCode(
  deps: Deps,
  request: PendingRequest,
  userId: string,
  signIn: SignIn,
  orgId: string | null = null,
): Promise<string> {
  const code = await mintCode(deps, request, userId, signIn, orgId);
  deps.background(forgetPendingRequest(deps.env, request.id));
  return authorizationResponse(deps.config, request.redirectUri, { code, state: request.state });
}

/**
 * The code of `issueCode`, stored and answered as it is: for a request that goes back to no redirect URI (a FedCM
 * ID assertion, src/oauth2/fedcm.ts, whose request was never kept in KV).
 */
export async function mintCode(
  deps: Deps,
  request: PendingRequest,
  userId: string,
  signIn: SignIn,
  orgId: string | null = null,
): Promise<string> {
  const random = base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
  const code = `${AUTHORIZATION_CODE_PREFIX}${slotHex(slotOfUser(userId))}${random}`;
  const inserted = await deps.shards
    .ofUser(userId)
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
      authTime: signIn.authTime,
      acr: signIn.acr ?? null,
      amr: signIn.amr ?? null,
      sid: signIn.sid ?? null,
      orgId,
      dpopJkt: request.dpopJkt ?? null,
      authorizationDetails: request.authorizationDetails ?? null,
      expiresAt: deps.now() + CODE_LIFETIME_MS,
    })
    .onConflictDoNothing({ target: oauth2Codes.requestId })
    .returning({ codeHash: oauth2Codes.codeHash })
    .get();
  if (!inserted) throw new AppError("invalid-request", "this authorization request was completed already");
  return code;
}

/**
 * Takes a code with one conditional UPDATE (unused and unexpired, or nothing), which marks it with the id of the
 * grant it starts: minted here with the code's slot, so the grant lands in the code's shard, its user's. Two
 * exchanges racing with the same code cannot both win. A code that was used before and already started a grant is
 * a replay, which RFC 6749 §4.1.2 and RFC 9700 §4.2.4 answer by revoking what it issued: the grant goes, with its
 * refresh tokens, and its access tokens turn inactive: every grant made BEFORE this exchange tried to take the code.
 * A second exchange racing the first (sent before the first had written its grant: a double submit) is only refused,
 * so that of two parallel exchanges one succeeds. The line is drawn by time, not by luck: the first's grant is
 * written one wave after its take (token-requests.ts), so "no grant yet" alone would spare a replay arriving in that
 * wave and revoke a twin arriving after it. A fault of the take itself, its lost answer included, puts the code back
 * (`putBackCode`, by the grant id minted here) before the 503: the client's retry redeems it.
 */
export async function consumeCode(
  deps: Deps,
  code: string,
  /**
   * Statements that run in the take's batch, after it (one round trip, one transaction): the grant the code starts
   * and the user it is for (token-requests.ts). Their results come back in `alongside`, in their order.
   */
  alongside?: (db: Db, codeHash: string, grantId: string) => BatchItem<"sqlite">[],
): Promise<CodeRow & { grantId: string; db: Db; alongside: unknown[] }> {
  const invalid = new OAuth2Error("invalid_grant", "the code is invalid, expired or used");
  const place = placeOfCode(deps.shards, code);
  if (!place) throw invalid;
  const { db, slot } = place;
  // A code from before the slot is in the only database: any id names it.
  const grantId = slot === undefined ? `${GRANT_ID_PREFIX}${randomUuid()}` : newGrantId(slot);
  const codeHash = await sha256Hex(code);
  const tried = deps.now();
  const take = db
    .update(oauth2Codes)
    .set({ usedAt: tried, grantId })
    .where(
      and(eq(oauth2Codes.codeHash, codeHash), isNull(oauth2Codes.usedAt), gt(oauth2Codes.expiresAt, tried)),
    )
    .returning();
  // The take's own fault (D1 may have run it and lost the answer) puts the code back by this take's grant id: right
  // whether it ran or not. Else the retry the 503 asks for found the code used and was refused (invalid_grant).
  const [takenRows, ...after] = await onFaultPutBack(
    { putBack: putBackCode({ db, codeHash, grantId }) },
    async () =>
      alongside
        ? db.batch([take, ...alongside(db, codeHash, grantId)] as [typeof take, ...BatchItem<"sqlite">[]])
        : [await take],
  );
  const taken = (takenRows as CodeRow[])[0];
  if (taken) return { ...taken, grantId, db, alongside: after };
  const used = and(eq(oauth2Codes.codeHash, codeHash), isNotNull(oauth2Codes.usedAt));
  const revoked = await db
    .delete(oauth2Grants)
    .where(
      and(
        inArray(oauth2Grants.id, db.select({ id: oauth2Codes.grantId }).from(oauth2Codes).where(used)),
        lt(oauth2Grants.createdAt, tried),
      ),
    )
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

/**
 * What puts a code `consumeCode` took back in play after a fault in what followed (the grant's writes, the tokens'
 * signing key, an org-bound grant's membership read: the 503 the client retries), so that the retry redeems it instead
 * of reading as a replay that revokes a grant no answer carried. One batch (one transaction): the grant this take
 * started goes and the code is unused again, both or neither, so a code back in play never names a grant. Only this
 * take's: a code another exchange has taken since (its grant id) stays as it is. The next take mints a new grant id.
 */
export function putBackCode(taken: { db: Db; codeHash: string; grantId: string }): PutBack["putBack"] {
  const { db, codeHash, grantId } = taken;
  return putBackWith("authorization code", () =>
    db.batch([
      db.delete(oauth2Grants).where(eq(oauth2Grants.id, grantId)),
      db
        .update(oauth2Codes)
        .set({ usedAt: null, grantId: null })
        .where(and(eq(oauth2Codes.codeHash, codeHash), eq(oauth2Codes.grantId, grantId))),
    ]),
  );
}
