import { LogLevel, WorkerMailer } from "worker-mailer";
import type { Config } from "../../config";
import { type Mailer, mailFailure } from "../mailer";

/** Long enough for a slow relay, short enough that a dead one does not hold the request for a minute. */
const TIMEOUT_MS = 10_000;

/**
 * A relay that is down or busy, which a retry may well find up: the connection refused (workerd's words for a socket
 * that does not open), or a reply of SMTP's transient class 4yz (RFC 5321 §4.2.1, e.g. 421 "service not available",
 * 451 "try again later"). Timeouts and lost connections are `platformFault`'s already. A refused login, sender or
 * recipient (5yz) is none of these: a retry would meet it again.
 */
const RELAY_DOWN = /cannot connect to the specified address|connection refused/i;
/** The first reply code in worker-mailer's message (`Failed to connect to SMTP server: 421 …`, `Invalid RCPT TO: <…> 550 …`). */
const REPLY_CODE = /(?:^|[\s:])([2-5])\d\d(?:[\s-]|$)/;

function relayDown(error: unknown): boolean {
  const message = error instanceof Error ? error.message : String(error);
  return RELAY_DOWN.test(message) || REPLY_CODE.exec(message)?.[1] === "4";
}

/**
 * SMTP over the Workers TCP socket API (`cloudflare:sockets`) with `worker-mailer`. One connection per message:
 * mail is rare next to requests, and a pooled connection would not survive between isolates anyway.
 * `AUTH_SMTP_SECURE=true` is TLS from the first byte (port 465); otherwise STARTTLS is used when the server offers it.
 * Workers cannot connect to port 25 (platform rule), so relays listen on 587 or 465.
 */
export function smtpMailer(config: Config): Mailer {
  const options = {
    host: config.mail.smtp.host!,
    port: config.mail.smtp.port,
    secure: config.mail.smtp.secure,
    authType: config.mail.smtp.authMethod,
    credentials: config.mail.smtp.user
      ? { username: config.mail.smtp.user, password: config.mail.smtp.pass ?? "" }
      : undefined,
    socketTimeoutMs: TIMEOUT_MS,
    responseTimeoutMs: TIMEOUT_MS,
    // Failures are reported once, by the error handler, with the request id.
    logLevel: LogLevel.NONE,
  };
  const from = config.mail.sender!;
  return {
    async send({ to, subject, text, html }) {
      let mailer: WorkerMailer | undefined;
      try {
        mailer = await WorkerMailer.connect(options);
        await mailer.send({ from, to, subject, text, html });
      } catch (error) {
        throw mailFailure("smtp", error, relayDown(error));
      } finally {
        // The library's one-shot helper skips QUIT when sending fails; close in every case.
        await mailer?.close().catch(() => {});
      }
    },
  };
}
