import type { MailAddress } from "../../settings/messages";
import { type Mailer, mailFailure } from "../mailer";

/**
 * Cloudflare Email Service through a `send_email` binding named `EMAIL`, with the structured message form (the
 * platform builds the MIME). The sender's domain must be onboarded to Email Sending.
 */
export function cloudflareEmailMailer(binding: SendEmail, sender: MailAddress): Mailer {
  const from = sender.name ? { email: sender.email, name: sender.name } : sender.email;
  return {
    async send({ to, subject, text, html }) {
      try {
        await binding.send({ from, to, subject, text, html });
      } catch (error) {
        throw mailFailure("cloudflare-email", error);
      }
    },
  };
}
