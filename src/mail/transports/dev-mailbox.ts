import type { Db } from "../../db/client";
import { devMailbox } from "../../db/schema";
import type { Mailer } from "../mailer";

/** Development transport: messages are kept in D1 and read back at `GET {prefix}/dev/mailbox?to=`. */
export function devMailboxMailer(db: Db, now: () => number = Date.now): Mailer {
  return {
    async send(message) {
      await db.insert(devMailbox).values({ ...message, to: message.to.toLowerCase(), createdAt: now() });
    },
  };
}
