import { AppError } from "../errors";

/** The one interface every SMS transport implements. A refused or failed send rejects with `cannot-send-sms`. */
export interface SmsSender {
  /** `about`: what the text is, for a transport that writes its own (the app's `SEND_SMS` hook). */
  send(to: string, body: string, about?: SmsContext): Promise<void>;
}

/** The template a text was rendered from, its code and its recipient (the User resource). */
export interface SmsContext {
  template: string;
  locale: string;
  code?: string;
  user: unknown;
}

/** A provider's refusal: `400 cannot-send-sms` to the client (contract §3.2), the provider's reason in the log. */
export function smsFailure(transport: string, error: unknown): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  return new AppError("cannot-send-sms", undefined, `${transport}: ${reason}`);
}
