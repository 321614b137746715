import { z } from "zod";
import { ConfigError } from "../errors";
import { type HooksConfig, parseHooks } from "../hooks/config";
import { templateCatalog } from "../mail/templates";
import { bool, isLocalUrl, settingsSlice } from "./kit";

/** How mails and SMS leave (contract §9): SMTP or the EMAIL binding, Twilio, the app's hooks, or the dev stores. */

export interface MailAddress {
  name?: string;
  email: string;
}

/** `noreply@example.com` or `Example <noreply@example.com>` (the reference's two forms). */
function parseSender(value: string | undefined): MailAddress | null {
  if (!value) return null;
  const named = /^\s*"?([^"<>]*?)"?\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(value);
  const email = named ? named[2]! : value.trim();
  if (!z.email().safeParse(email).success) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be an address or Name <address>");
  }
  return named?.[1] ? { name: named[1], email } : { email };
}

const vars = z.object({
  AUTH_EMAIL_TEMPLATES: z.string().optional(),
  AUTH_SMTP_HOST: z.string().optional(),
  AUTH_SMTP_PORT: z.coerce.number().int().min(1).max(65535).default(587),
  AUTH_SMTP_USER: z.string().optional(),
  AUTH_SMTP_PASS: z.string().optional(),
  AUTH_SMTP_SENDER: z.string().optional(),
  AUTH_SMTP_SECURE: bool(false),
  // The reference also accepts CRAM-MD5; worker-mailer's CRAM-MD5 cannot parse a real server's challenge, and the
  // method is obsolete next to PLAIN over TLS (RFC 8314), so it is refused here rather than failing at the first mail.
  AUTH_SMTP_AUTH_METHOD: z
    .enum(["PLAIN", "LOGIN", "plain", "login"], "must be PLAIN or LOGIN")
    .default("PLAIN")
    .transform((v) => v.toLowerCase() as "plain" | "login"),
  AUTH_SMS_PROVIDER: z.enum(["twilio"]).optional(),
  AUTH_SMS_TWILIO_ACCOUNT_SID: z.string().optional(),
  AUTH_SMS_TWILIO_AUTH_TOKEN: z.string().optional(),
  /** A messaging service SID (`MG…`) or a sender number in E.164. */
  AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID: z.string().optional(),
  AUTH_DEV_MAILBOX: bool(false),
  AUTH_DEV_SMS: bool(false),
});

/** Mail settings that only make sense together: a half-configured transport fails here, not at the first mail. */
function checkMailTransport(env: object, data: z.output<typeof vars>, sender: MailAddress | null) {
  if ("EMAIL" in env && env.EMAIL && !sender) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be set with the EMAIL binding");
  }
  if (!data.AUTH_SMTP_HOST) return;
  if (!sender)
    throw new ConfigError("invalid configuration: AUTH_SMTP_SENDER must be set with AUTH_SMTP_HOST");
  if (data.AUTH_SMTP_USER && data.AUTH_SMTP_PASS === undefined) {
    throw new ConfigError("invalid configuration: AUTH_SMTP_PASS must be set with AUTH_SMTP_USER");
  }
}

/**
 * The development transports keep every mail and SMS readable by anyone at `/dev/mailbox` and `/dev/sms`: a
 * production deployment with one of them switched on would hand out every sign-in link and code. They only start
 * where the service itself is local.
 */
function checkDevelopmentTransports(data: z.output<typeof vars>, server: string) {
  for (const name of ["AUTH_DEV_MAILBOX", "AUTH_DEV_SMS"] as const) {
    if (data[name] && !isLocalUrl(server)) {
      throw new ConfigError(
        `invalid configuration: ${name} is for development only and AUTH_SERVER_URL (${server}) is not local`,
      );
    }
  }
}

function checkTwilio(data: z.output<typeof vars>) {
  if (data.AUTH_SMS_PROVIDER !== "twilio") return;
  for (const name of [
    "AUTH_SMS_TWILIO_ACCOUNT_SID",
    "AUTH_SMS_TWILIO_AUTH_TOKEN",
    "AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID",
  ] as const) {
    if (!data[name])
      throw new ConfigError(`invalid configuration: ${name} must be set with AUTH_SMS_PROVIDER`);
  }
}

export const messageSettings = settingsSlice(
  vars,
  (data, before: { urls: { server: string }; outbound: { allowLocal: boolean } }, env) => {
    const sender = parseSender(data.AUTH_SMTP_SENDER);
    checkMailTransport(env, data, sender);
    checkDevelopmentTransports(data, before.urls.server);
    checkTwilio(data);
    return {
      mail: {
        /** `AUTH_SMTP_SENDER` parsed; null when unset. Every production transport sends from it. */
        sender,
        /** The built-in mail templates with `AUTH_EMAIL_TEMPLATES` applied. */
        templates: templateCatalog(data.AUTH_EMAIL_TEMPLATES),
        smtp: {
          host: data.AUTH_SMTP_HOST,
          port: data.AUTH_SMTP_PORT,
          user: data.AUTH_SMTP_USER,
          pass: data.AUTH_SMTP_PASS,
          secure: data.AUTH_SMTP_SECURE,
          authMethod: data.AUTH_SMTP_AUTH_METHOD,
        },
      },
      sms: {
        provider: data.AUTH_SMS_PROVIDER,
        twilio: {
          accountSid: data.AUTH_SMS_TWILIO_ACCOUNT_SID,
          authToken: data.AUTH_SMS_TWILIO_AUTH_TOKEN,
          messagingServiceId: data.AUTH_SMS_TWILIO_MESSAGING_SERVICE_ID,
        },
      },
      /** The development stores (`AUTH_DEV_MAILBOX`, `AUTH_DEV_SMS`), refused unless the server is local. */
      devTransports: { mailbox: data.AUTH_DEV_MAILBOX, sms: data.AUTH_DEV_SMS },
      /** The app's synchronous hooks, `AUTH_HOOK_<NAME>_URL` and `_SECRET` (src/hooks/config.ts); unset ones absent. */
      hooks: parseHooks(env as Record<string, unknown>, before.outbound.allowLocal) as HooksConfig,
    };
  },
);
