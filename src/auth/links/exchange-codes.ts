import { and, eq, gt } from "drizzle-orm";
import { idForUser, shardOfRouted } from "../../db/routed-ids";
import { linkExchangeCodes } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { verifierMatches } from "../../lib/pkce";
import { type SignInResult, type SignInScope, startSession } from "../sign-in";
import { findUserById } from "../users";

/** Long enough for the app to load and post it back, short like an OAuth code (RFC 6749 §4.1.2: "10 minutes max"). */
const CODE_LIFETIME_MS = 5 * 60 * 1000;

/**
 * Exchange codes, the PKCE variant of the mailed links (client.md §15; not the OAuth2 server's authorization codes,
 * src/oauth2/codes.ts): an app that sent a `codeChallenge` with the request gets a
 * one-time code in the redirect instead of a refresh token, and only the holder of the verifier can turn it into a
 * session. A token in a URL ends up in browser history and logs; a code without its verifier is worth nothing there.
 */
export async function issueExchangeCode(deps: Deps, userId: string, codeChallenge: string): Promise<string> {
  // The code carries its user's slot: the exchange, which knows only the code, finds the user's shard.
  const code = idForUser(userId);
  await deps.shards
    .ofUser(userId)
    .insert(linkExchangeCodes)
    .values({
      codeHash: await sha256Hex(code),
      userId,
      codeChallenge,
      expiresAt: deps.now() + CODE_LIFETIME_MS,
    });
  return code;
}

/**
 * `POST /token/exchange`: consumes the code in one `DELETE … RETURNING` before the verifier is checked, so a wrong
 * verifier burns the code too (no guessing against one code). Every failure is the same 400. A user with TOTP on
 * gets the `mfa` ticket instead of a session: the mailed link was one factor.
 */
export async function redeemExchangeCode(
  scope: SignInScope,
  input: { code: string; codeVerifier: string },
): Promise<SignInResult> {
  const { deps } = scope;
  const invalid = new AppError("invalid-request", "invalid or expired code");
  const row = await shardOfRouted(deps.shards, input.code)
    ?.delete(linkExchangeCodes)
    .where(
      and(
        eq(linkExchangeCodes.codeHash, await sha256Hex(input.code)),
        gt(linkExchangeCodes.expiresAt, deps.now()),
      ),
    )
    .returning()
    .get();
  if (!row || !(await verifierMatches(input.codeVerifier, row.codeChallenge))) throw invalid;
  const user = await findUserById(deps.shards, row.userId);
  if (!user) throw invalid;
  if (user.disabled) throw new AppError("disabled-user");
  return startSession(scope, { user, mfaGate: true });
}
