import type { Deps } from "../../../http/deps";
import { admitImported } from "../../../http/imported-tokens";
import { verifyImportedSupabaseToken } from "../../../lib/imported-supabase-tokens";
import { HASURA_NAMESPACE } from "../../../signing-keys/jwt";
import { GoTrueError } from "./errors";
import type { GoTrueClaims } from "./tokens";

/**
 * The old Supabase project's access tokens on this face (contract supabase.md §6): verified by its key
 * (`AUTH_IMPORTED_SUPABASE_JWT_SECRET`, src/lib/imported-supabase-tokens.ts), then admitted under the recorded
 * `supabase` cut-over, its ceiling and the user's state here, by the same rules as Nhost's (src/http/imported-tokens.ts).
 * Its `session_id` is the GoTrue session the import carried under the same id: the routes' own session check then
 * finds it live (or answers `session_not_found`, as GoTrue does for a session that is gone).
 *
 * Read only: of the routes behind a user's token, an old one is let through only on the pure reads listed here
 * (getUser, whose answer also serves mfa.listFactors and getUserIdentities, and the passkey list); everything else,
 * each write and each read that starts a change (`GET /reauthenticate` mails a code, `GET /user/identities/authorize`
 * starts a link), is refused 403. An allow-list, so that a route added later is refused until someone decides.
 * Storage takes it through `importedGoTrueClaims` (its uploads are the user's, as on the Nhost face); the data calls'
 * forward never does (forward/exchange.ts verifies the face's own tokens only: contract §4, "imported tokens are
 * refused").
 */

const READS = [/\/auth\/v1\/user$/, /\/auth\/v1\/passkeys$/];

export type ImportedGoTrueClaims = GoTrueClaims & { imported: true; hasura: Record<string, unknown> };

/** The old token's claims when it is admitted; null when it is not an old token or is refused. */
export async function importedGoTrueClaims(deps: Deps, token: string): Promise<ImportedGoTrueClaims | null> {
  const imported = deps.config.supabase.imported;
  if (!imported) return null;
  const { maxLifetime } = deps.config.imported;
  const payload = await verifyImportedSupabaseToken(
    imported.secret,
    imported.issuer,
    token,
    HASURA_NAMESPACE,
    maxLifetime,
  );
  if (!payload) return null;
  const admitted = await admitImported(deps, payload, maxLifetime);
  if (!admitted) return null;
  return {
    sub: payload.sub,
    session_id: payload.session_id,
    exp: payload.exp,
    imported: true,
    hasura: admitted[HASURA_NAMESPACE] as Record<string, unknown>,
  };
}

/** GoTrue's shape of the contract's refusal. */
export function refuseUnlessRead(method: string, path: string): void {
  if ((method === "GET" || method === "HEAD") && READS.some((read) => read.test(path))) return;
  throw new GoTrueError(403, "forbidden", "a token of the previous system cannot change credentials");
}
