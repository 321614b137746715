import type { LinkForm, TicketType } from "../../../auth";
import type { Config } from "../../../config";
import { AppError } from "../../../errors";
import { codeChallengeSchema } from "../../../lib/pkce";
import { isRedirectAllowedBy } from "../../../lib/redirect";
import { GoTrueError } from "./errors";
import { goTrueIssuer } from "./tokens";

/**
 * GoTrue's mailed links (contract supabase.md §2, "Mail"), over the core's tickets: each mail of this face carries
 * `{origin}/supabase/auth/v1/verify?token=…&type=…&redirect_to=…` and a six-digit code for the same ticket, and the
 * send-email hook gets GoTrue's `email_data`. The `token_hash` an app passes to `verifyOtp` is the ticket itself: a
 * high-entropy secret kept here only as its SHA-256, where GoTrue's is `sha224(email + code)`, which anyone knowing
 * the address could find among a million values (docs/decisions.md). Apps treat it as opaque either way.
 */

/** GoTrue's verification types of a mail, and the core's tickets each accepts (a ticket of another type is refused). */
export const MAIL_TYPES = {
  // A first `signInWithOtp` to a new address is GoTrue's sign-up mail; here it is the magic link's ticket.
  signup: ["verifyEmail", "passwordlessEmail"],
  invite: ["passwordlessEmail"],
  magiclink: ["passwordlessEmail"],
  email: ["verifyEmail", "passwordlessEmail"],
  recovery: ["passwordReset"],
  email_change: ["emailConfirmChange"],
} as const satisfies Record<string, readonly TicketType[]>;

export type MailType = keyof typeof MAIL_TYPES;

export const isMailType = (type: string): type is MailType => Object.hasOwn(MAIL_TYPES, type);

/** The type GoTrue names a ticket's mail with (its link's `type`, the hook's `email_action_type`). */
const ACTION_OF: Record<TicketType, MailType> = {
  verifyEmail: "signup",
  passwordlessEmail: "magiclink",
  passwordReset: "recovery",
  emailConfirmChange: "email_change",
};

/**
 * How this face mails a ticket. `action` overrides the type the mail is named by (an invitation is a magic link's
 * ticket that GoTrue calls `invite`).
 */
export function goTrueLinkForm(config: Config, action?: MailType): LinkForm {
  const nameOf = (type: TicketType) => action ?? ACTION_OF[type];
  return {
    withCode: true,
    link(ticket, type, redirectTo) {
      const link = new URL(`${goTrueIssuer(config)}/verify`);
      link.searchParams.set("token", ticket);
      link.searchParams.set("type", nameOf(type));
      link.searchParams.set("redirect_to", redirectTo);
      return link.toString();
    },
    hookData: ({ ticket, code, type, redirectTo }) => ({
      email_data: {
        token: code ?? "",
        token_hash: ticket,
        redirect_to: redirectTo,
        email_action_type: nameOf(type),
        site_url: config.urls.client,
        token_new: "",
        token_hash_new: "",
      },
    }),
  };
}

/**
 * The app's `redirect_to`, when the allow-list admits it; otherwise none, and the mail leads to the default target
 * (`AUTH_CLIENT_URL`), as GoTrue falls back to `SITE_URL` (contract §1, "Redirects").
 */
export function allowedRedirect(config: Config, redirectTo: string | undefined): string | undefined {
  return redirectTo && isRedirectAllowedBy(config, redirectTo) ? redirectTo : undefined;
}

/**
 * The PKCE challenge auth-js sends with a mail's request (`flowType: "pkce"`), or none. Only S256: auth-js falls back
 * to `plain` where it has no SHA-256, which protects nothing once the challenge is seen (RFC 9700 §2.1.1).
 */
export function challengeOf(body: {
  code_challenge?: string | null;
  code_challenge_method?: string | null;
}): string | undefined {
  if (!body.code_challenge) return undefined;
  const challenge = codeChallengeSchema.safeParse(body.code_challenge);
  if (body.code_challenge_method?.toLowerCase() !== "s256" || !challenge.success) {
    throw new GoTrueError(400, "validation_failed", "code_challenge_method must be s256");
  }
  return challenge.data;
}

/** The core's refusals of a code or a link, in GoTrue's words (`otp_expired` 403 for every wrong one). */
export function asOtpRefusal(error: unknown): unknown {
  if (!(error instanceof AppError)) return error;
  if (error.code === "invalid-otp")
    return new GoTrueError(403, "otp_expired", "Token has expired or is invalid");
  if (error.code === "invalid-ticket") {
    return new GoTrueError(403, "otp_expired", "Email link is invalid or has expired");
  }
  if (error.code === "disabled-endpoint")
    return new GoTrueError(422, "otp_disabled", "OTP sign-ins are disabled");
  return error;
}
