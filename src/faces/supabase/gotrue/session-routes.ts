import { Hono } from "hono";
import { z } from "zod";
import {
  findUserByEmail,
  liveSession,
  renewSession,
  revokeAllSessions,
  revokeOtherUserSessions,
  revokeSession,
  signInEmailPassword,
  signInScope,
  signUpEmailPassword,
  toWireUser,
} from "../../../auth";
import { AppError } from "../../../errors";
import type { AppEnv } from "../../../http/app-env";
import { passSignUpChecks } from "../../../http/sign-up-gate";
import { passChallenge } from "../../../http/turnstile";
import { GoTrueError } from "./errors";
import { signGoTrueToken, verifyGoTrueToken } from "./tokens";
import { goTrueSession, goTrueUser } from "./wire";

/**
 * GoTrue's sign-up, password and refresh grants, the user and sign-out (contract supabase.md §2), each a call of the
 * same core flow the Nhost routes call, its answer shaped as GoTrue's. What auth-js sends: JSON bodies, the grant in
 * the query (`/token?grant_type=…`), the captcha token in `gotrue_meta_security`, `redirect_to` in the query.
 */

const captcha = z.object({ captcha_token: z.string().max(4096).nullish() }).nullish();

const signUpBody = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024),
  data: z.record(z.string(), z.unknown()).nullish(),
  gotrue_meta_security: captcha,
  code_challenge: z.string().max(128).nullish(),
  code_challenge_method: z.string().max(16).nullish(),
});

const passwordGrant = z.object({
  email: z.email().max(254).nullish(),
  phone: z.string().max(32).nullish(),
  password: z.string().min(1).max(1024),
  gotrue_meta_security: captcha,
});

const refreshGrant = z.object({ refresh_token: z.string().min(1).max(200) });

/** A JSON body checked against `schema`, or GoTrue's 400 `validation_failed` naming what is wrong. */
async function bodyOf<T extends z.ZodType>(
  c: { req: { json(): Promise<unknown> } },
  schema: T,
): Promise<z.output<T>> {
  let raw: unknown;
  try {
    raw = await c.req.json();
  } catch {
    throw new GoTrueError(400, "bad_json", "Could not parse request body as JSON");
  }
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.map(String).join(".");
  throw new GoTrueError(
    400,
    "validation_failed",
    field ? `${field}: ${issue?.message}` : "Invalid request body",
  );
}

/** The token's user and session, alive: GoTrue's check on every authenticated route. */
async function signedIn(c: { req: { header(name: string): string | undefined }; var: AppEnv["Variables"] }) {
  const header = c.req.header("authorization") ?? "";
  const token = /^Bearer (\S+)$/i.exec(header)?.[1];
  if (!token) throw new GoTrueError(401, "no_authorization", "This endpoint requires a valid Bearer token");
  const claims = await verifyGoTrueToken(c.var.config, token);
  const live = await liveSession(c.var.deps, claims.session_id);
  if (!live || live.id !== claims.sub) {
    throw new GoTrueError(403, "session_not_found", "Session from session_id claim in JWT does not exist");
  }
  if (live.disabled) throw new GoTrueError(403, "user_banned", "User is banned");
  return { claims, user: live };
}

export const goTrueSessionRoutes = new Hono<AppEnv>()
  .post("/signup", async (c) => {
    const body = await bodyOf(c, signUpBody);
    if (!body.email) {
      throw new GoTrueError(
        400,
        "validation_failed",
        "Sign-up with a phone number is not available on this face yet",
      );
    }
    await passSignUpChecks(c.var.deps, undefined, body.gotrue_meta_security?.captcha_token ?? null);
    const scope = signInScope(c, "email-password", { signUp: true, minter: signGoTrueToken });
    const { session } = await signUpEmailPassword(scope, {
      email: body.email,
      password: body.password,
      options: { metadata: body.data ?? undefined, redirectTo: c.req.query("redirect_to") },
    });
    if (session) return c.json(goTrueSession(session, c.var.deps.now()));
    // Confirmation needed: GoTrue answers the user, without a session.
    const made = await findUserByEmail(c.var.deps.shards, body.email);
    if (!made) throw new AppError("internal-server-error", undefined, "a new user was not found");
    return c.json(goTrueUser(toWireUser(made)));
  })
  .post("/token", async (c) => {
    const grant = c.req.query("grant_type");
    if (grant === "password") {
      const body = await bodyOf(c, passwordGrant);
      if (!body.email) {
        throw new GoTrueError(
          400,
          "validation_failed",
          "Sign-in with a phone number is not available on this face yet",
        );
      }
      await passChallenge(c.var.deps, ["signin"], body.gotrue_meta_security?.captcha_token ?? null);
      const scope = signInScope(c, "email-password", { minter: signGoTrueToken });
      try {
        const { session, mfa } = await signInEmailPassword(scope, {
          email: body.email,
          password: body.password,
        });
        if (!session || mfa) {
          throw new GoTrueError(400, "mfa_challenge_needed", "This account signs in with a second factor");
        }
        return c.json(goTrueSession(session, c.var.deps.now()));
      } catch (error) {
        // GoTrue refuses a banned user's password grant with 400.
        if (error instanceof AppError && error.code === "disabled-user") {
          throw new GoTrueError(400, "user_banned", "User is banned");
        }
        throw error;
      }
    }
    if (grant === "refresh_token") {
      const { refresh_token } = await bodyOf(c, refreshGrant);
      const session = await renewSession(c.var.deps, refresh_token, undefined, undefined, {
        minter: signGoTrueToken,
      });
      return c.json(goTrueSession(session, c.var.deps.now()));
    }
    throw new GoTrueError(400, "validation_failed", "unsupported_grant_type");
  })
  .get("/user", async (c) => {
    const { user } = await signedIn(c);
    return c.json(goTrueUser(toWireUser(user)));
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
