import { verifySupabaseFaceToken } from "../faces/supabase";
import type { Deps } from "../http/deps";
import { verifyAccessToken } from "../signing-keys/jwt";
import type { Face } from "./types";

/** A session access token of either face, verified, with the face that issued it. */
export interface FaceToken {
  sub: string;
  sid?: string;
  cnf?: { jkt: string };
  face: Face;
  claims: Record<string, unknown>;
}

/**
 * A session access token of the Nhost face (our issuer, no `aud`) or of the Supabase face (its issuer, `aud`
 * `authenticated`): each face's own check, a signature with the cached key set and no D1 read. An old system's
 * token after a move is not taken here: it reads only on the service's own API (contract supabase.md §6), a rule a
 * consumer Worker could not keep, and admitting it costs D1 reads (docs/workers.md).
 */
export async function verifyFaceToken(deps: Deps, token: string): Promise<FaceToken | null> {
  if (token.length > 8192) return null;
  const nhost = await verifyAccessToken(deps.config, token);
  if (nhost) return { sub: nhost.sub, sid: nhost.sid, cnf: nhost.cnf, face: "nhost", claims: { ...nhost } };
  const supabase = await verifySupabaseFaceToken(deps.config, token);
  if (!supabase) return null;
  // A `cnf` we did not write binds to nothing we could check: no token (as `verifyAccessToken` rules).
  const cnf = supabase.cnf as { jkt?: unknown } | undefined;
  if (cnf !== undefined && (typeof cnf?.jkt !== "string" || Object.keys(cnf).length !== 1)) return null;
  return {
    sub: supabase.sub as string,
    sid: typeof supabase.sid === "string" ? supabase.sid : (supabase.session_id as string),
    cnf: cnf as { jkt: string } | undefined,
    face: "supabase",
    claims: { ...supabase },
  };
}
