import type { Config } from "../config";
import type { Db } from "../db/client";
import type { Env } from "../env";
import { AppError } from "../errors";
import type { HookDeps } from "../hooks/call";
import type { Mailer } from "./mailer";
import { cloudflareEmailMailer } from "./transports/cloudflare-email";
import { devMailboxMailer } from "./transports/dev-mailbox";
import { hookMailer } from "./transports/hook";
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
 * The transport, in this order: the app's `SEND_EMAIL` hook (`AUTH_HOOK_SEND_EMAIL_URL`, contract move-in §5.3: it
 * replaces the others, the development mailbox included), the development mailbox (`AUTH_DEV_MAILBOX=true`, set only
 * by `npm start`), SMTP (`AUTH_SMTP_HOST`), Cloudflare Email Service (the `EMAIL` send_email binding).
 * docs/decisions.md, "Mail" and "Hooks".
 */
export function createMailer(config: Config, env: Env, db: Db, hooks: Omit<HookDeps, "config">): Mailer {
  if (config.hooks.SEND_EMAIL) return hookMailer({ ...hooks, config });
  if (config.devTransports.mailbox) return devMailboxMailer(db);
  if (config.mail.smtp.host) return smtpMailer(config);
  if (env.EMAIL) return cloudflareEmailMailer(env.EMAIL, config.mail.sender!);
  return noTransport;
}
