import { AppError, UnavailableError } from "../errors";

/**
 * The one interface every SMS transport implements. A send the provider refused rejects with `cannot-send-sms`; one
 * that failed for now (the provider unreachable, silent, or down) with 503 `service-unavailable`.
 */
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

/**
 * The provider could not be reached, did not answer in time, or answered that it failed for now (5xx, 429): a retry
 * may well get through, so 503 `service-unavailable` with `Retry-After` (contract §1), not the refusal above.
 */
export function smsUnavailable(transport: string, error: unknown): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  return new UnavailableError(`${transport}: ${reason}`);
}
