import { AppError, platformFault, UnavailableError } from "../errors";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** What the mail is, for a transport that writes its own (the app's `SEND_EMAIL` hook); others send it as rendered. */
  about?: MailContext;
}

/** The template a message was rendered from and what was filled in: what an app needs to write the mail itself. */
export interface MailContext {
  template: string;
  locale: string;
  link?: string;
  code?: string;
  /** The User resource of the recipient. */
  user: unknown;
  /** What the face that sent the mail adds to its hook's payload (GoTrue's `email_data`), top-level keys. */
  faceData?: Record<string, unknown>;
}

/** The one interface every mail transport implements. A failed send rejects; it never pretends to succeed. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/**
 * A transport's failure, the transport's reason in the log only: 503 `service-unavailable` with Retry-After when the
 * transport failed for now (contract §1: a binding that errs or times out, or what the transport itself knows to be
 * passing, `forNow`; the send can be retried), otherwise 500 `internal-server-error` (a sender or login refused: the
 * deployment must change, a retry would not help).
 */
export function mailFailure(transport: string, error: unknown, forNow = false): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  const fault = platformFault(error);
  if (fault || forNow) return new UnavailableError(`${transport}: ${reason}`, fault?.retryAfterSeconds);
  return new AppError("internal-server-error", undefined, `${transport}: ${reason}`);
}
