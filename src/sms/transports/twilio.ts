import type { Config } from "../../config";
import { type SmsSender, smsFailure, smsUnavailable } from "../sender";

const API = "https://api.twilio.com/2010-04-01";
/** As for the identity providers: a Twilio that hangs becomes a 503, not a request held open. */
const TIMEOUT_MS = 10_000;

/**
 * Twilio's Messages API (`POST /Accounts/{sid}/Messages.json`, form-encoded, HTTP Basic with the account SID and
 * auth token). The sender is a messaging service (`MG…`) or a number. Goes through `outbound`, so tests answer it
 * with a local fake on the same code path.
 */
export function twilioSender(config: Config, outbound: typeof fetch): SmsSender {
  const sid = config.sms.twilio.accountSid!;
  const authorization = `Basic ${btoa(`${sid}:${config.sms.twilio.authToken!}`)}`;
  const sender = config.sms.twilio.messagingServiceId!;
  const senderField = sender.startsWith("MG") ? "MessagingServiceSid" : "From";
  return {
    async send(to, body) {
      let response: Response;
      try {
        response = await outbound(`${API}/Accounts/${encodeURIComponent(sid)}/Messages.json`, {
          method: "POST",
          headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ To: to, Body: body, [senderField]: sender }),
          signal: AbortSignal.timeout(TIMEOUT_MS),
        });
      } catch (error) {
        throw smsUnavailable("twilio", error);
      }
      if (!response.ok) {
        // Twilio's error body says why (`{"code":21211,"message":"… is not a valid phone number"}`): log it.
        const detail = (await response.text().catch(() => "")).slice(0, 500);
        const failure = response.status >= 500 || response.status === 429 ? smsUnavailable : smsFailure;
        throw failure("twilio", `HTTP ${response.status} ${detail}`);
      }
    },
  };
}
