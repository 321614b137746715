import { Hono } from "hono";
import { z } from "zod";
import {
  changeUserPassword,
  mergeOwnMetadata,
  revokeAllSessions,
  revokeOtherUserSessions,
  revokeSession,
  toWireUser,
} from "../../../auth";
import type { AppEnv } from "../../../http/app-env";
import { metadataSchema } from "../../../lib/json-metadata";
import { rateLimit, rateLimitSend } from "../../../rate-limits/middleware";
import { requireAal2ForCredentials } from "./assurance";
import { GoTrueError } from "./errors";
import { e164 } from "./phone";
import { bearerClaims, bodyOf, liveOrRefusal, signedIn } from "./request";
import {
  emailChangePending,
  proofNeeded,
  proveNonce,
  requestEmailChange,
  requestPhoneChange,
} from "./user-change";
import { liveUserWithExtras } from "./user-of-session";
import { extrasOf, wholeGoTrueUser } from "./user-reads";

/** GoTrue's user (`getUser`, `updateUser`) and sign-out (contract supabase.md §2), over the token's live session. */

const userUpdate = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024).nullish(),
  nonce: z.string().max(64).nullish(),
  data: metadataSchema.nullish(),
});

export const goTrueUserRoutes = new Hono<AppEnv>()
  .get("/user", async (c) => {
    // getUserIdentities and mfa.listFactors read them here: the session check reads the user's identities and factors
    // in its own row (user-of-session.ts); they are used only once the session is found live and the token's.
    const claims = await bearerClaims(c);
    const { live, extras } = await liveUserWithExtras(c.get("deps"), claims.session_id);
    const user = liveOrRefusal(claims, live);
    return c.json(wholeGoTrueUser(toWireUser(user), await extras?.()));
  })
  // A password change, as the Nhost API's, is counted against guessing.
  .put("/user", rateLimit("BRUTE_FORCE"), async (c) => {
    const { claims, user: current } = await signedIn(c);
    const body = await bodyOf(c, userUpdate);
    const { deps } = c.var;
    const emailChanges = Boolean(body.email && body.email.toLowerCase() !== current.email);
    const phoneChanges = Boolean(body.phone && e164(body.phone) !== current.phoneNumber);
    if (body.password || emailChanges || phoneChanges) await requireAal2ForCredentials(deps, current);
    // A reauthentication code (GET /reauthenticate) is this face's proof for a sensitive change (user-change.ts).
    if (!body.nonce && (body.password || body.email || body.phone) && (await proofNeeded(deps, claims.sub))) {
      throw new GoTrueError(400, "reauthentication_needed", "Password update requires reauthentication");
    }
    // A changed address is mailed and a number texted, each counted as the Nhost API's sends to an address or a
    // number are (contract §11): per client address and per recipient. After the proof is known to be needed or not
    // (a change refused for want of it sends nothing, so counts nothing), before the code is spent (a 429 leaves the
    // user their code).
    if (emailChanges) await rateLimitSend(c, "EMAIL", "email", body.email!);
    if (body.phone) await rateLimitSend(c, "SMS", "phone", body.phone);
    if (body.nonce) await proveNonce(deps, claims.sub, body.nonce);
    let pending: string | undefined;
    if (emailChanges) {
      pending = await requestEmailChange(c, current, body.email!);
    }
    const pendingPhone = body.phone ? await requestPhoneChange(c, current, body.phone) : undefined;
    if (body.password) {
      // The other sessions end, as on the Nhost face; this one stays.
      await changeUserPassword(
        deps,
        { newPassword: body.password },
        { sub: claims.sub, sid: claims.session_id },
      );
    }
    const user = body.data ? await mergeOwnMetadata(deps, claims.sub, body.data) : current;
    const extras = (await extrasOf(deps, [claims.sub])).get(claims.sub);
    return c.json({
      ...wholeGoTrueUser(toWireUser(user), extras),
      ...(pending ? emailChangePending(pending, deps.now()) : {}),
      ...(pendingPhone ? { new_phone: pendingPhone.replace(/^\+/, "") } : {}),
    });
  })
  .post("/logout", async (c) => {
    const { claims } = await signedIn(c);
    const scope = c.req.query("scope") ?? "global";
    if (scope === "local") await revokeSession(c.var.deps, claims.session_id);
    else if (scope === "others") await revokeOtherUserSessions(c.var.deps, claims.sub, claims.session_id);
    else if (scope === "global") await revokeAllSessions(c.var.deps, claims.sub);
    else throw new GoTrueError(400, "validation_failed", "scope must be global, local or others");
    return c.body(null, 204);
  });
