import { AppError } from "../errors";

/** The one interface every SMS transport implements. A refused or failed send rejects with `cannot-send-sms`. */
export interface SmsSender {
  send(to: string, body: string): Promise<void>;
}

/** A provider's refusal: `400 cannot-send-sms` to the client (contract §3.2), the provider's reason in the log. */
export function smsFailure(transport: string, error: unknown): AppError {
  const reason = error instanceof Error ? error.message : String(error);
  return new AppError("cannot-send-sms", undefined, `${transport}: ${reason}`);
}
