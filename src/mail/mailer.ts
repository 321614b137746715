import type { Config } from "../config";
import type { Db } from "../db/client";
import { devMailbox } from "../db/schema";
import { AppError } from "../errors";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** The one interface every mail transport implements (dev mailbox now; SMTP and Cloudflare Email later). */
export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

/** Development transport: messages are kept in D1 and read back at `GET {prefix}/dev/mailbox?to=`. */
export function devMailboxMailer(db: Db, now: () => number = Date.now): Mailer {
  return {
    async send(message) {
      await db.insert(devMailbox).values({ ...message, to: message.to.toLowerCase(), createdAt: now() });
    },
  };
}

/** Fails loudly: a service that must send mail and has no transport is misconfigured, not silently successful. */
const noTransport: Mailer = {
  send() {
    return Promise.reject(
      new AppError("internal-server-error", undefined, "no mail transport is configured"),
    );
  },
};

export function createMailer(config: Config, db: Db): Mailer {
  return config.AUTH_DEV_MAILBOX ? devMailboxMailer(db) : noTransport;
}
