import { type SignInScope, type TicketType, type VerifiedTicket, verifyTicket } from "../../../auth";
import { AppError } from "../../../errors";
import { MAIL_TYPES, type MailType } from "./mail-links";

/**
 * Links Supabase mailed before the move (contract supabase.md §5, `import-supabase`): GoTrue's link and `token_hash`
 * are the hex SHA-224 of the address and the code (`crypto.GenerateTokenHash`), with `pkce_` before it under PKCE.
 * The import keeps each pending one as a ticket of the core's type, `<type>:<that hash>` (by its SHA-256 only, as
 * every ticket), so the same link still confirms, once, until the time GoTrue would have let it. The types each
 * verification type looks in are GoTrue's (`verifyTokenHash`): its confirmation token serves sign-up, invitation and
 * `email`; its recovery token the recovery and magic-link mails.
 */
const GOTRUE_HASH = /^(?:pkce_)?([0-9a-f]{56})$/;

const IMPORTED_TYPES: Record<MailType, readonly TicketType[]> = {
  signup: ["verifyEmail"],
  invite: ["verifyEmail"],
  email: ["verifyEmail", "passwordReset"],
  magiclink: ["passwordReset"],
  recovery: ["passwordReset"],
  email_change: ["emailConfirmChange"],
};

/** A mailed link's token (the face's own ticket, or a GoTrue token hash an import carried), consumed once. */
export async function verifyMailedToken(
  scope: SignInScope,
  token: string,
  type: MailType,
  options: { direct?: boolean } = {},
): Promise<VerifiedTicket> {
  const hash = GOTRUE_HASH.exec(token)?.[1];
  if (!hash) return verifyTicket(scope, token, { accepted: MAIL_TYPES[type], ...options });
  for (const ticketType of IMPORTED_TYPES[type]) {
    try {
      return await verifyTicket(scope, `${ticketType}:${hash}`, { accepted: [ticketType], ...options });
    } catch (error) {
      if (!(error instanceof AppError && error.code === "invalid-ticket")) throw error;
    }
  }
  throw new AppError("invalid-ticket");
}
