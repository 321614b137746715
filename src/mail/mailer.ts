import { AppError } from "../errors";

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
}

/** The one interface every mail transport implements. A failed send rejects; it never pretends to succeed. */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** A transport's failure: 500 `internal-server-error` to the client, the transport's reason in the log only. */
export function mailFailure(transport: string, error: unknown): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  return new AppError("internal-server-error", undefined, `${transport}: ${reason}`);
}
