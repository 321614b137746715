// The app's password-migration hook for the shared `wrangler dev` server (test/compat/wrangler-dev.ts): the code
// docs/migrating-from-cognito.md gives people, read from the guide itself and served on the path it names
// (`POST /hooks/password-migration`), asking the Cognito stand-in (cognito-stand-in.ts). If the guide's code is wrong,
// test/compat/cognito-migration.test.ts fails. It runs for the whole compat project: an imported user without a
// password hash in any other file is unknown to the stand-in, so the hook answers `{"verified": false}` and the
// sign-in is the 401 it was without the hook (docs/decisions.md, "Issue 44: Cognito through the hook, end to end").
//
// What the guide's code does not do, done around it for the test alone, on a second port (`control`): count the calls
// per identifier (`GET /calls`), and take the hook down and up again (`POST /down`, `POST /up`: the port closed,
// every connection dropped, then the same port listened on again). The compat files run one at a time, so one file
// taking it down affects no other.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { COGNITO_CLIENT_ID, startCognitoStandIn } from "./cognito-stand-in";

const GUIDE = join(process.cwd(), "docs", "migrating-from-cognito.md");
export const HOOK_PATH = "/hooks/password-migration";

/** The guide's hook module: its one ```js block, the one that opens with `// password-migration.mjs`. */
function guideHookSource(): string {
  const block = /```js\n(\/\/ password-migration\.mjs\n[\s\S]*?)```/.exec(readFileSync(GUIDE, "utf8"));
  if (!block) throw new Error(`${GUIDE}: no \`\`\`js block opening with // password-migration.mjs`);
  return block[1]!;
}

async function body(incoming: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve((server.address() as { port: number }).port);
    });
  });
}

export interface MigrationHook {
  /** AUTH_HOOK_PASSWORD_MIGRATION_URL and _SECRET for the server. */
  url: string;
  secret: string;
  /** Where the test counts calls and takes the hook down (above). */
  control: string;
  close(): Promise<void>;
}

export async function startMigrationHook(): Promise<MigrationHook> {
  const cognito = await startCognitoStandIn();
  const secret = `whsec_${randomBytes(32).toString("base64")}`;
  // The guide's module, where Node resolves its `standardwebhooks` from the repository's node_modules, with the
  // environment it reads at load.
  const dir = join(process.cwd(), "node_modules", ".cache", `compat-migration-hook-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "password-migration.mjs");
  writeFileSync(file, guideHookSource());
  Object.assign(process.env, {
    PASSWORD_MIGRATION_SECRET: secret,
    COGNITO_ENDPOINT: cognito.endpoint,
    COGNITO_CLIENT_ID,
  });
  const { POST } = (await import(pathToFileURL(file).href)) as {
    POST: (request: Request) => Promise<Response>;
  };

  const calls = new Map<string, number>();
  const hook = createServer(async (incoming, outgoing) => {
    const received = await body(incoming);
    if (incoming.method !== "POST" || incoming.url !== HOOK_PATH) {
      outgoing.writeHead(404).end();
      return;
    }
    let identifier = "";
    try {
      identifier = String((JSON.parse(received.toString()) as { identifier?: unknown }).identifier ?? "");
    } catch {}
    calls.set(identifier, (calls.get(identifier) ?? 0) + 1);
    const request = new Request(`http://127.0.0.1${HOOK_PATH}`, {
      method: "POST",
      headers: incoming.headers as Record<string, string>,
      body: received,
    });
    // A framework answers a handler's exception with a 500; so does this.
    const response = await POST(request).catch(() => new Response(null, { status: 500 }));
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
  const port = await listen(hook, 0);

  const control = createServer(async (incoming, outgoing) => {
    await body(incoming);
    if (incoming.url === "/calls") {
      outgoing.writeHead(200, { "content-type": "application/json" });
      outgoing.end(JSON.stringify(Object.fromEntries(calls)));
      return;
    }
    if (incoming.url === "/down") {
      await new Promise<void>((resolve) => {
        hook.close(() => resolve());
        hook.closeAllConnections();
      });
    } else if (incoming.url === "/up") {
      await listen(hook, port);
    } else {
      outgoing.writeHead(404).end();
      return;
    }
    outgoing.writeHead(204).end();
  });
  const controlPort = await listen(control, 0);

  return {
    url: `http://127.0.0.1:${port}${HOOK_PATH}`,
    secret,
    control: `http://127.0.0.1:${controlPort}`,
    async close() {
      hook.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => (hook.listening ? hook.close(resolve) : resolve(null))),
        new Promise((resolve) => control.close(resolve)),
        cognito.close(),
      ]);
      rmSync(dir, { recursive: true, force: true });
      for (const name of ["PASSWORD_MIGRATION_SECRET", "COGNITO_ENDPOINT", "COGNITO_CLIENT_ID"])
        delete process.env[name];
    },
  };
}
