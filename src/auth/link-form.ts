/**
 * How a face other than Nhost's mails its links (src/faces/: GoTrue's `/verify?token=…&type=…`): the link's form, a
 * six-digit code beside the link for the same effect (links/mailed-codes.ts), and what the face's send-email hook
 * carries beside the message. The ticket is the same; only its wording differs. At the root of core auth because a
 * sign-in's scope carries it (sign-in/scope.ts) to the flows that mail (links/).
 */

/** The kinds of mailed link (links/tickets.ts `TICKET_TYPES`). */
export type LinkTicketType = "verifyEmail" | "passwordlessEmail" | "passwordReset" | "emailConfirmChange";

export interface LinkForm {
  link(ticket: string, type: LinkTicketType, redirectTo: string): string;
  withCode: boolean;
  hookData?(facts: {
    ticket: string;
    code?: string;
    type: LinkTicketType;
    redirectTo: string;
  }): Record<string, unknown>;
}
