import type { Config } from "../config";
import type { Db } from "../db/client";
import type { Env } from "../env";
import { AppError } from "../errors";
import type { Mailer } from "./mailer";
import { cloudflareEmailMailer } from "./transports/cloudflare-email";
import { devMailboxMailer } from "./transports/dev-mailbox";
import { smtpMailer } from "./transports/smtp";

/** Fails loudly: a service that must send mail and has no transport is misconfigured, not silently successful. */
const noTransport: Mailer = {
  send() {
    return Promise.reject(
      new AppError("internal-server-error", undefined, "no mail transport is configured"),
    );
  },
};

/**
 * The transport, in this order: the development mailbox (`AUTH_DEV_MAILBOX=true`, set only by `npm start`), SMTP
 * (`AUTH_SMTP_HOST`), Cloudflare Email Service (the `EMAIL` send_email binding). docs/decisions.md, "Mail".
 */
export function createMailer(config: Config, env: Env, db: Db): Mailer {
  if (config.AUTH_DEV_MAILBOX) return devMailboxMailer(db);
  if (config.AUTH_SMTP_HOST) return smtpMailer(config);
  if (env.EMAIL) return cloudflareEmailMailer(env.EMAIL, config.mailSender!);
  return noTransport;
}
