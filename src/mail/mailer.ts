import { AppError } from "../errors";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
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
