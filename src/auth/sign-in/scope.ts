import type { Context } from "hono";
import type { AppEnv } from "../../http/app-env";
import { logError } from "../../http/context";
import type { Deps } from "../../http/deps";
import { writeDeviceCookie } from "../devices";
import type { LinkForm } from "../link-form";
import type { AccessTokenMinter, ReadsAlongside } from "../new-sessions";
import type { Method } from "./method";

/**
 * What a sign-in needs of its request, gathered once by the route (`signInScope`) and passed to the flow: the flow
 * never reaches back into the HTTP context. `method` is how the route's sign-in is recorded (null: a proof that is no
 * sign-in of its own, as the account center's re-authentication and a passkey elevation have always been recorded).
 */
export interface SignInScope {
  readonly deps: Deps;
  /** For the log lines of what runs after the answer. */
  readonly requestId: string;
  readonly method: Method | null;
  /** A sign-up: the account's creation is its event (`signup`), not the session it may start. */
  readonly signUp: boolean;
  readonly userAgent: string | undefined;
  /** The key of the request's DPoP proof (checked by `sessionProof`, src/http/auth.ts), null without one. */
  readonly dpopJkt: string | null;
  /** Where the browser says the request comes from (`Sec-Fetch-Site`): whether it keeps the device cookie. */
  readonly fetchSite: string | undefined;
  /** Sets the device cookie on the route's answer (contract §13); the pipeline calls it once a session exists. */
  readonly giveDeviceCookie: (value: string) => void;
  /** The addresses the before-first-factor checks passed in this request (./pipeline.ts): each is asked once. */
  readonly checked: Set<string>;
  /** The face's own access token (src/faces/supabase/: GoTrue's claims); none: the Nhost face's. */
  readonly minter?: AccessTokenMinter;
  /**
   * GoTrue's rule for a user with a verified second factor: the first factor gives a session short of it (`aal1`),
   * which the app steps up, instead of the Nhost face's `mfaTotp:` ticket (docs/decisions.md, "Issue 43: MFA").
   */
  readonly secondFactorLater?: boolean;
  /** The face's own form of the links the flow mails (GoTrue's `/verify?token=…` and a code); none: Nhost's. */
  readonly linkForm?: LinkForm;
  /** A face's reads of the user, in the batch that writes the session (../new-sessions.ts `ReadsAlongside`). */
  readonly alongside?: ReadsAlongside;
  /**
   * The route's rate limit, counted beside the flow's first reads (`rateLimitBeside`): the flow awaits it before it
   * writes anything or looks at a credential. None when the route counts before the handler.
   */
  readonly counted?: Promise<void>;
}

/**
 * The route's sign-in scope. A sign-in (not a sign-up) also names its method for the failure audit
 * (`c.var.signInMethod`, src/runtime/app.ts): a refusal of its credentials is recorded under it.
 */
export function signInScope(
  c: Context<AppEnv>,
  method: Method | null,
  {
    signUp = false,
    minter,
    secondFactorLater = false,
    linkForm,
    alongside,
  }: {
    signUp?: boolean;
    minter?: AccessTokenMinter;
    secondFactorLater?: boolean;
    linkForm?: LinkForm;
    alongside?: ReadsAlongside;
  } = {},
): SignInScope {
  if (method && !signUp) c.set("signInMethod", method);
  return {
    deps: c.get("deps"),
    requestId: c.get("requestId"),
    method,
    signUp,
    userAgent: c.req.header("user-agent"),
    dpopJkt: c.get("sessionJkt") ?? null,
    fetchSite: c.req.header("sec-fetch-site"),
    giveDeviceCookie: (value) => {
      try {
        writeDeviceCookie(c, value);
      } catch (error) {
        logError(c.get("requestId"), "device cookie", error);
      }
    },
    checked: new Set(),
    counted: c.get("pendingCount"),
    minter,
    secondFactorLater,
    linkForm,
    alongside,
  };
}
