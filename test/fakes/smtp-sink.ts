// Global setup of the Workers tests: a real SMTP server on loopback (nodemailer's `smtp-server`) that keeps every
// message it receives, and a small HTTP endpoint through which the tests, running inside workerd, read them back.
// What is checked is what arrived on the wire: the envelope, the authenticated user and the parsed MIME message.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import PostalMime from "postal-mime";
import { SMTPServer } from "smtp-server";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    smtpPort: number;
    smtpInboxUrl: string;
  }
}

/** The credentials the sink accepts; anything else is refused with 535. */
export const SMTP_USER = "mailer";
export const SMTP_PASS = "smtp secret";

export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  authUser: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  /** The message as it came through DATA. */
  raw: string;
}

/** Listens on a free loopback port; `address` is the underlying `net.Server` (SMTPServer keeps it as `.server`). */
function listen(
  server: { listen(port: number, host: string, ready: () => void): unknown },
  address: () => AddressInfo,
): Promise<number> {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(address().port)));
}

export default async function setup(project: TestProject) {
  const inbox: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    // Plain text on loopback: the Worker's STARTTLS would need a certificate it trusts.
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username !== SMTP_USER || auth.password !== SMTP_PASS)
        return callback(new Error("Invalid username or password"));
      callback(null, { user: auth.username });
    },
    onRcptTo(address, _session, callback) {
      // A recipient the relay refuses, to prove refusals reach the client as errors.
      if (address.address.startsWith("bounce-")) {
        const error = Object.assign(new Error("mailbox unavailable"), { responseCode: 550 });
        return callback(error);
      }
      // A relay that is busy for now (SMTP's transient 4yz class), to prove that reaches the client as a 503.
      if (address.address.startsWith("busy-")) {
        const error = Object.assign(new Error("try again later"), { responseCode: 451 });
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", async () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const parsed = await PostalMime.parse(raw);
        inbox.push({
          envelope: {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
            to: session.envelope.rcptTo.map((r) => r.address),
          },
          authUser: typeof session.user === "string" ? session.user : null,
          from: parsed.from ? `${parsed.from.name ?? ""} <${parsed.from.address ?? ""}>`.trim() : "",
          to: (parsed.to ?? []).map((a) => a.address ?? ""),
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          html: parsed.html ?? "",
          raw,
        });
        callback();
      });
    },
  });
  const smtpPort = await listen(smtp, () => smtp.server.address() as AddressInfo);

  const http = createServer((request, response) => {
    const to = new URL(request.url ?? "/", "http://sink").searchParams.get("to")?.toLowerCase();
    const mails = inbox.filter((mail) => !to || mail.envelope.to.includes(to)).reverse();
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(mails));
  });
  const httpPort = await listen(http, () => http.address() as AddressInfo);

  project.provide("smtpPort", smtpPort);
  project.provide("smtpInboxUrl", `http://127.0.0.1:${httpPort}/messages`);
  return async () => {
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };
}
