import { Webhook } from "standardwebhooks";

/**
 * Standard Webhooks (the specification the `standardwebhooks` library implements): how every signed POST of the
 * service is signed, the app's synchronous hooks (src/hooks/) and the asynchronous webhooks (src/webhooks/) alike.
 * `webhook-id` names the message, `webhook-timestamp` is the time in seconds (receivers refuse one too old, so a
 * captured call cannot be replayed later), and `webhook-signature` is `v1,<base64 HMAC-SHA256 of
 * "<id>.<timestamp>.<body>">` under the base64-decoded secret. The library's own signer, so that what we sign is
 * what its verifier checks.
 */
export function standardWebhookHeaders(
  secret: string,
  id: string,
  body: string,
  at: Date,
): { "webhook-id": string; "webhook-timestamp": string; "webhook-signature": string } {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

/** A `whsec_` secret as Standard Webhooks writes one: 32 random bytes, base64. */
export function newStandardWebhookSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}
