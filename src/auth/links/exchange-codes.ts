import { and, eq, gt } from "drizzle-orm";
import { idForUser, shardOfRouted } from "../../db/routed-ids";
import { linkExchangeCodes } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { verifierMatches } from "../../lib/pkce";
import { type Claimed, onFaultPutBack, putBackWith, spentUnlessPutBack } from "../../lib/put-back";
import { activeMembership } from "../org-membership";
import { type Method, type SignInResult, type SignInScope, startSession } from "../sign-in";
import { findUserById } from "../users";

/** Long enough for the app to load and post it back, short like an OAuth code (RFC 6749 §4.1.2: "10 minutes max"). */
const CODE_LIFETIME_MS = 5 * 60 * 1000;

/**
 * Exchange codes, the PKCE variant of the mailed links (client.md §15; not the OAuth2 server's authorization codes,
 * src/oauth2/codes.ts): an app that sent a `codeChallenge` with the request gets a
 * one-time code in the redirect instead of a refresh token, and only the holder of the verifier can turn it into a
 * session. A token in a URL ends up in browser history and logs; a code without its verifier is worth nothing there.
 */
export async function issueExchangeCode(
  deps: Deps,
  userId: string,
  codeChallenge: string,
  /**
   * How the session it opens is recorded, when not the mailed link's (a provider or enterprise sign-in of the
   * Supabase face), and the organization an enterprise sign-in starts it in. Written after the id, inside the code:
   * its stored hash covers them, so nobody can change them.
   */
  start?: { method: Method; orgId?: string },
): Promise<string> {
  // The code carries its user's slot: the exchange, which knows only the code, finds the user's shard.
  const suffix = start ? `.${start.method}${start.orgId ? `.${start.orgId}` : ""}` : "";
  const code = `${idForUser(userId)}${suffix}`;
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

/** Why a code was refused (the Nhost API answers both alike; GoTrue names them apart). */
export type ExchangeRefusal = "no-code" | "bad-verifier";

/** The tokens a provider's sign-in handed over for the app, as the provider gave them (src/providers' hand-off). */
export type ProviderTokens = Record<string, unknown>;

/** How a caller redeems a code: what depends on its face; the rest is the flow's (`redeemExchangeCode`). */
export interface Redemption<Answer> {
  /** The scope the session starts in, once the code's method is known (the Supabase face's depends on it). */
  scopeFor(method: Method | undefined): SignInScope;
  /**
   * The caller's answer, with the reads it needs (the Supabase face's identities and factors): a fault there still
   * puts the code back.
   */
  answer(result: SignInResult): Promise<Answer>;
  /** A refused code in the caller's words; else the Nhost API's 400 `invalid-request`, the reason as its detail. */
  refusal?: (reason: ExchangeRefusal) => Error;
  /**
   * For a provider's code, the take of the tokens its sign-in handed over (src/providers' `takeProviderTokens`, given
   * by the caller: providers build on core auth, which cannot import them back). A fault in it puts them back itself.
   */
  providerTokens?: (deps: Deps, userId: string, provider: string) => Promise<ProviderTokens>;
}

/** A redeemed code: the caller's answer, and a provider's tokens when asked for and the code was a provider's. */
export interface Redeemed<Answer> {
  answer: Answer;
  providerTokens: ProviderTokens | undefined;
}

/**
 * A code claimed for its exchange: its row as the claim found it (now under the claim's key), the put-back that gives
 * it its hash again, and the delete that spends it for good.
 */
interface ClaimedCode extends Claimed {
  row: typeof linkExchangeCodes.$inferSelect;
}

/**
 * Redeems an exchange code, for every caller (the Nhost API's `POST /token/exchange`, the Supabase face's
 * `exchangeCodeForSession` and its implicit flow's callback): the claim, the verifier, the user, the session in the
 * code's organization, the caller's answer, a provider's tokens last. A fault anywhere from the claim on (its own lost
 * answer included) puts the code back for the retry; anything else spends it (`spentUnlessPutBack`). A user with TOTP
 * on gets the `mfa` ticket instead of a session, unless the scope steps sessions up later: the mailed link (or the
 * provider) was one factor.
 */
export async function redeemExchangeCode<Answer>(
  deps: Deps,
  input: { code: string; codeVerifier: string },
  how: Redemption<Answer>,
): Promise<Redeemed<Answer>> {
  const refuse = (reason: ExchangeRefusal) =>
    how.refusal?.(reason) ?? new AppError("invalid-request", "invalid or expired code", reason);
  const claimed = await claimExchangeCode(deps, input.code, refuse);
  return spentUnlessPutBack(deps.background, "exchange code", claimed, async () => {
    // Checked after the claim, so a wrong verifier spends the code too (no guessing against one code).
    if (!(await verifierMatches(input.codeVerifier, claimed.row.codeChallenge))) throw refuse("bad-verifier");
    const user = await findUserById(deps.shards, claimed.row.userId);
    if (!user) throw refuse("no-code");
    if (user.disabled) throw new AppError("disabled-user");
    const { method, orgId } = startOfCode(input.code);
    const result = await startSession(how.scopeFor(method), {
      user,
      method,
      org: await orgOfCode(deps, orgId, user.id),
      mfaGate: true,
    });
    const answer = await how.answer(result);
    // Last, after every other read and write: the hand-off is single use, and its take puts it back only when a
    // statement of its own fails (a lost answer included), so a fault after it would lose it; before it, the fault
    // leaves it for the retry the code was put back for (taken earlier, that retry signed in without it).
    const provider = method?.startsWith("provider:") ? method.slice("provider:".length) : undefined;
    const providerTokens =
      provider && how.providerTokens ? await how.providerTokens(deps, user.id, provider) : undefined;
    return { answer, providerTokens };
  });
}

/** How the session a code opens is recorded, and its organization: written after the code's id (`issueExchangeCode`). */
function startOfCode(code: string): { method: Method | undefined; orgId: string | undefined } {
  const dot = code.indexOf(".");
  const [method, orgId] = dot < 0 ? [] : code.slice(dot + 1).split(".");
  return { method: method as Method | undefined, orgId };
}

/**
 * Claims the code in one `UPDATE … RETURNING` that moves its row to a key only this request knows (`taken:<uuid>`; a
 * code's key is a SHA-256 in hex, so no take ever meets it): of two redemptions at once, one wins. The claim's own
 * fault (D1 may have run it and lost the answer) puts it back: the put-back renames this request's claim, so it is
 * right whether the claim ran or not, and gives back nothing another request took. One `DELETE … RETURNING`, whose
 * lost answer left no row to put back, spent the code for nothing: the retry was refused and the person signed in
 * again. No round trip more: the claimed row's delete comes after the answer (`spentUnlessPutBack`).
 */
async function claimExchangeCode(
  deps: Deps,
  code: string,
  refuse: (reason: ExchangeRefusal) => Error,
): Promise<ClaimedCode> {
  const dot = code.indexOf(".");
  const db = shardOfRouted(deps.shards, dot < 0 ? code : code.slice(0, dot));
  if (!db) throw refuse("no-code");
  const codeHash = await sha256Hex(code);
  const claim = `taken:${crypto.randomUUID()}`;
  const ofClaim = eq(linkExchangeCodes.codeHash, claim);
  const putBack = putBackWith("exchange code", () =>
    db.update(linkExchangeCodes).set({ codeHash }).where(ofClaim).run(),
  );
  const row = await onFaultPutBack({ putBack }, () =>
    db
      .update(linkExchangeCodes)
      .set({ codeHash: claim })
      .where(and(eq(linkExchangeCodes.codeHash, codeHash), gt(linkExchangeCodes.expiresAt, deps.now())))
      .returning()
      .get(),
  );
  if (!row) throw refuse("no-code");
  return { row, putBack, spend: () => db.delete(linkExchangeCodes).where(ofClaim).run() };
}

/** The organization an enterprise sign-in's code starts its session in, while the membership is still active. */
async function orgOfCode(deps: Deps, orgId: string | undefined, userId: string) {
  return orgId ? activeMembership(deps, orgId, userId) : undefined;
}
