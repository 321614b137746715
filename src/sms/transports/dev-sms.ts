import type { Db } from "../../db/client";
import { devSms } from "../../db/schema";
import type { SmsSender } from "../sender";

/** Development transport: messages are kept in D1 and read back at `GET {prefix}/dev/sms?to=`. */
export function devSmsSender(db: Db, now: () => number = Date.now): SmsSender {
  return {
    async send(to, body) {
      await db.insert(devSms).values({ to, body, createdAt: now() });
    },
  };
}
