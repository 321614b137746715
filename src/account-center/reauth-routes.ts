import { Hono } from "hono";
import { signInScope } from "../auth";
import { rateLimited } from "../browser/checks";
import { asUnavailable } from "../browser/page-response";
import { type BrowserSession, raiseBrowserSession } from "../browser/session";
import { judge } from "../browser/step-up";
import { AppError, RateLimitedError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { provePasskey, provePassword, proveTotp, signInMessage } from "../pages";
import { accountPost, accountSession, backToAccount, type Ctx, type Posted } from "./forms";
import { reauthPage } from "./reauth-page";
import { recentDemand, sectionOf } from "./recent-auth";
import { signInAgain } from "./sign-out";

/**
 * The re-authentication's form posts (recent-auth.ts): each proof goes through the API's own check for the person
 * signed in to this browser (src/pages/reauth-proofs.ts: their password with its rate limit and lockout, a TOTP
 * or recovery code with its guess cap, a passkey ceremony by THIS user just now) and, when it holds, raises the
 * browser session by that method (the cookie's MAC keeps the record honest). Then back to the section, or the next
 * step when the demand needs one more factor. Threats: a proof by another account (a passkey of someone else's on
 * this computer), refused by `provePasskey`; a cross-site post, refused by `accountPost`; guessing, capped by the
 * API's own limits, which a re-authentication shares.
 */

type Method = Awaited<ReturnType<typeof provePassword>>;

function readStep(posted: Posted) {
  return {
    section: sectionOf(posted.params.get("section")),
    elevated: posted.params.get("elevated") === "1",
  };
}

/** The session as the cookie now records it, after `method` counted from now. */
const raised = (c: Ctx, session: BrowserSession, method: Method): BrowserSession => {
  const now = c.var.deps.now();
  return { ...session, methods: { ...session.methods, [method]: now }, authTime: now };
};

async function raiseWith(
  c: Ctx,
  posted: Posted,
  prove: () => Promise<Method | "other-user">,
  /** The words for a refused proof, when the sign-in form's are not the right ones (a passkey's). */
  wordsFor?: () => string,
) {
  const { session, catalogue } = posted;
  const step = readStep(posted);
  const again = async (status: 400 | 401 | 429 | undefined, error: string) =>
    reauthPage(c, session, catalogue, {
      ...step,
      demanded: await recentDemand(c, session.user, step),
      status,
      error,
    });
  try {
    const method = await prove();
    if (method === "other-user") return again(400, catalogue.pages.errors.passkeyOfAnotherAccount);
    await raiseBrowserSession(c, session, method);
    const now = raised(c, session, method);
    const demanded = await recentDemand(c, session.user, step);
    // One factor of two: the page asks for the next one (a TOTP code after the password).
    if (judge(now.methods, demanded.demand) !== "met") {
      return reauthPage(c, now, catalogue, { ...step, demanded });
    }
    return backToAccount(c, step.section || "top", "confirmed");
  } catch (error) {
    if (!(error instanceof AppError) || (error.status >= 500 && error.status !== 503)) throw error;
    // A fault is no verdict on the proof: the step again, as a 503 that says to try again shortly.
    if (error.status === 503)
      return asUnavailable(again(undefined, catalogue.pages.errors.unavailable), error);
    if (error instanceof RateLimitedError) return again(429, signInMessage(c, catalogue.pages, error));
    return again(error.status === 400 ? 400 : 401, wordsFor?.() ?? signInMessage(c, catalogue.pages, error));
  }
}

export const reauthRoutes = new Hono<AppEnv>()
  .get("/confirm", async (c) => {
    const signed = await accountSession(c);
    if ("answer" in signed) return signed.answer;
    const step = { section: sectionOf(c.req.query("section")), elevated: c.req.query("elevated") === "1" };
    const demanded = await recentDemand(c, signed.session.user, step);
    if (judge(signed.session.methods, demanded.demand) === "met")
      return backToAccount(c, step.section || "top");
    return reauthPage(c, signed.session, signed.catalogue, { ...step, demanded });
  })
  .post("/reauth/password", async (c) => {
    const posted = await accountPost(c);
    if ("answer" in posted) return posted.answer;
    const { user } = posted.session;
    // The same bucket as the sign-in form's: a re-authentication is no way around its limit.
    const retryAfter = await rateLimited(c, "BRUTE_FORCE", user.email ?? user.id);
    const password = (posted.params.get("password") ?? "").slice(0, 256);
    return raiseWith(c, posted, async () => {
      if (retryAfter !== null) throw new RateLimitedError(retryAfter);
      return provePassword(signInScope(c, null), user, password);
    });
  })
  .post("/reauth/totp", async (c) => {
    const posted = await accountPost(c);
    if ("answer" in posted) return posted.answer;
    const otp = (posted.params.get("otp") ?? "").replace(/\s/g, "").slice(0, 64);
    return raiseWith(c, posted, () => proveTotp(signInScope(c, null), posted.session.user, otp));
  })
  .post("/reauth/passkey", async (c) => {
    const posted = await accountPost(c);
    if ("answer" in posted) return posted.answer;
    const refreshToken = posted.params.get("refresh_token") ?? "";
    return raiseWith(
      c,
      posted,
      () => provePasskey(signInScope(c, null), posted.session.user, refreshToken),
      () => posted.catalogue.pages.reauthPasskeyProblem,
    );
  })
  .post("/reauth/sign-in-again", signInAgain);
