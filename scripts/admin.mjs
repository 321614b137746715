// `npm run admin -- <command>`: a small command line over the admin API (contract §10) of a running service.
// Locally it talks to `npm start`'s server with the admin secret from .dev.vars: the one `npm start` recorded in
// .wrangler/ while it runs, else the one of PORT (environment, then .dev.vars). Against a deployment, set AUTH_URL
// (or --server) and ADMIN_SECRET. Tables for people by default, --json for scripts. Every error names the URL called.
import { parseArgs } from "node:util";
import { auditCommand } from "./audit-export/command.mjs";
import { cutOver } from "./cut-over.mjs";
import { importNhost } from "./import-nhost/command.mjs";
import { importSupabase } from "./import-supabase/command.mjs";
import { importUsers } from "./import-users/command.mjs";
import { localUrls, readDevVars, readRunning } from "./local.mjs";

const COMMON = {
  server: { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
};

/** Every command: what it does, how it is called, its own options, and what it runs. */
const COMMANDS = {
  secret: {
    summary: "print the local admin secret (from .dev.vars)",
    usage: "secret",
    run: (cli) => console.log(cli.secret()),
  },
  "create-user": {
    summary: "create a user (verified with --verified; a password from NEW_USER_PASSWORD)",
    usage:
      "create-user --email <e> [--display-name <n>] [--verified] [--role <r>]…\n" +
      "  The password, if any, comes from the environment (NEW_USER_PASSWORD), never from a flag: npm prints the\n" +
      "  command line it runs.",
    options: {
      email: { type: "string" },
      // Refused: declared so that the message names the variable to set instead.
      password: { type: "string" },
      "display-name": { type: "string" },
      verified: { type: "boolean", default: false },
      role: { type: "string", multiple: true },
    },
    async run(cli, values) {
      if (!values.email) cli.usageError("needs --email");
      // npm prints the command line of the script it runs: a password given as a flag lands on the terminal, in CI
      // logs and in `ps`. The message names the variable and never repeats the value.
      if (values.password !== undefined)
        cli.usageError(
          "takes no --password: npm prints the command line. Set NEW_USER_PASSWORD in the environment",
        );
      const password = process.env.NEW_USER_PASSWORD;
      const user = await cli.call("POST", "/users", {
        email: values.email,
        ...(password ? { password } : {}),
        ...(values["display-name"] ? { displayName: values["display-name"] } : {}),
        ...(values.role?.length ? { allowedRoles: values.role, defaultRole: values.role[0] } : {}),
        emailVerified: values.verified,
      });
      cli.show(user, () => cli.record(user, ["id", "email", "displayName", "emailVerified", "defaultRole"]));
    },
  },
  "list-users": {
    summary: "list users, newest first (--search matches email, name or id)",
    usage: "list-users [--search <text>] [--limit <n>]",
    options: { search: { type: "string" }, limit: { type: "string" } },
    async run(cli, values) {
      const page = await cli.call("GET", `/users${query({ search: values.search, limit: values.limit })}`);
      cli.show(page, () => {
        cli.table(page.items, ["id", "email", "displayName", "disabled", "createdAt", "lastSeen"]);
        if (page.nextCursor) console.log("(more: raise --limit)");
      });
    },
  },
  "get-user": {
    summary: "one user, with sessions, security keys and providers",
    usage: "get-user <id>",
    argument: "a user id",
    async run(cli, _values, id) {
      const user = await cli.call("GET", `/users/${encodeURIComponent(id)}`);
      cli.show(user, () => cli.record(user));
    },
  },
  "disable-user": {
    summary: "disable a user: no sign-in, tokens stop working",
    usage: "disable-user <id>",
    argument: "a user id",
    async run(cli, _values, id) {
      const user = await cli.call("PATCH", `/users/${encodeURIComponent(id)}`, { disabled: true });
      cli.show(user, () => cli.record(user, ["id", "email", "disabled"]));
    },
  },
  "enable-user": {
    summary: "enable a disabled user",
    usage: "enable-user <id>",
    argument: "a user id",
    async run(cli, _values, id) {
      const user = await cli.call("PATCH", `/users/${encodeURIComponent(id)}`, { disabled: false });
      cli.show(user, () => cli.record(user, ["id", "email", "disabled"]));
    },
  },
  "delete-user": {
    summary: "delete a user and everything of theirs",
    usage: "delete-user <id>",
    argument: "a user id",
    async run(cli, _values, id) {
      await cli.call("DELETE", `/users/${encodeURIComponent(id)}`);
      cli.show({ deleted: id }, () => console.log("deleted"));
    },
  },
  "revoke-sessions": {
    summary: "sign a user out everywhere",
    usage: "revoke-sessions <userId>",
    argument: "a user id",
    async run(cli, _values, id) {
      await cli.call("DELETE", `/users/${encodeURIComponent(id)}/sessions`);
      cli.show({ revoked: id }, () => console.log("every session revoked"));
    },
  },
  "create-client": {
    summary: "create an OAuth2 client (docs/oauth2.md); its secret is shown once",
    usage:
      "create-client --name <n> [--redirect-uri <uri>]… [--public] [--native] [--scope <s>]… [--grant <g>]… [--resource <uri>]…\n" +
      "  A redirect URI is needed unless --grant leaves out authorization_code (device flow, client_credentials).",
    options: {
      name: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      public: { type: "boolean", default: false },
      native: { type: "boolean", default: false },
      scope: { type: "string", multiple: true },
      grant: { type: "string", multiple: true },
      resource: { type: "string", multiple: true },
    },
    async run(cli, values) {
      const grants = values.grant?.length ? values.grant : undefined;
      const needsRedirect = !grants || grants.includes("authorization_code");
      if (!values.name) cli.usageError("needs --name");
      if (needsRedirect && !values["redirect-uri"]?.length) {
        cli.usageError("needs --redirect-uri for the authorization_code grant");
      }
      const client = await cli.call("POST", "/oauth2/clients", {
        clientName: values.name,
        redirectUris: values["redirect-uri"] ?? [],
        ...(grants ? { grantTypes: grants } : {}),
        ...(values.native ? { applicationType: "native" } : {}),
        ...(values.resource?.length ? { resources: values.resource } : {}),
        ...(values.scope?.length
          ? { scopes: ["openid", "profile", "email", "offline_access", ...values.scope] }
          : {}),
        ...(values.public ? { tokenEndpointAuthMethod: "none" } : {}),
      });
      // The issuer as the server itself states it: what a relying party must be configured with, exactly.
      const issuer = await cli.issuer();
      cli.show({ ...client, issuer }, () => {
        cli.record({ ...client, issuer }, [
          "clientId",
          "clientSecret",
          "clientName",
          "redirectUris",
          "grantTypes",
          "scopes",
          "tokenEndpointAuthMethod",
          "issuer",
        ]);
        if (client.clientSecret)
          console.log("\nThe client secret is shown this once; only its hash is stored.");
      });
    },
  },
  "list-clients": {
    summary: "list OAuth2 clients, with how each was registered",
    usage: "list-clients [--limit <n>]",
    options: { limit: { type: "string" } },
    async run(cli, values) {
      const page = await cli.call("GET", `/oauth2/clients${query({ limit: values.limit })}`);
      cli.show(page, () =>
        cli.table(page.items, [
          "clientId",
          "clientName",
          "tokenEndpointAuthMethod",
          "registration",
          "lastUsedAt",
        ]),
      );
    },
  },
  "list-keys": {
    summary: "the signing keys: which one signs, which are only published",
    usage: "list-keys",
    async run(cli) {
      const keys = await cli.call("GET", "/keys");
      cli.show(keys, () => cli.table(keys.items, ["kid", "status", "source", "alg", "createdAt"]));
    },
  },
  "rotate-keys": {
    summary: "make a new signing key; the old one stays published",
    usage: "rotate-keys",
    async run(cli) {
      const key = await cli.call("POST", "/keys/rotate");
      cli.show(key, () => cli.record(key, ["kid", "status", "source", "alg", "createdAt"]));
    },
  },
  "delete-key": {
    summary: "stop publishing a retired key (--force: now, though its tokens may be valid: after a leak)",
    usage: "delete-key <kid> [--force]",
    argument: "a kid",
    options: { force: { type: "boolean", default: false } },
    async run(cli, values, kid) {
      await cli.call("DELETE", `/keys/${encodeURIComponent(kid)}${values.force ? "?force=true" : ""}`);
      cli.show({ deleted: kid }, () => console.log("deleted"));
    },
  },
  audit: auditCommand,
  "import-nhost": importNhost,
  "import-users": importUsers,
  "import-supabase": importSupabase,
  "cut-over": cutOver,
  "mirror-resync": {
    summary: "rebuild the Postgres mirror (MIRROR_DB) from the service's data, page by page (docs/hasura.md)",
    usage:
      "mirror-resync [--cursor <c>]\n  --cursor resumes an interrupted run where its last progress line says.",
    options: { cursor: { type: "string" } },
    async run(cli, values) {
      // Each phase's rows by the table it writes: a prune phase deletes, the next one writes.
      const TABLES = { users: "auth.users", buckets: "storage.buckets", files: "storage.files" };
      const totals = Object.fromEntries(
        Object.values(TABLES).map((table) => [table, { table, written: 0, deleted: 0, skipped: 0 }]),
      );
      let cursor = values.cursor;
      do {
        const page = await cli.call("POST", "/mirror/resync", cursor ? { cursor } : {});
        const total = totals[TABLES[page.phase.replace(/^prune-/, "")]];
        total.written += page.written;
        total.deleted += page.deleted;
        total.skipped += page.skipped;
        cursor = page.next;
        if (cursor) console.error(`mirror-resync: ${page.phase} … (resume with --cursor '${cursor}')`);
      } while (cursor);
      const rows = Object.values(totals);
      cli.show({ tables: rows }, () => {
        cli.table(rows, ["table", "written", "deleted", "skipped"]);
        console.log("\nThe mirror matches the service's data; events carry on from here.");
      });
    },
  },
};

/**
 * The local server: the port given in the environment (PORT), else the one a running `npm start` recorded, else the
 * one of .dev.vars (PORT there, or 8787). Its URLs are those `npm start` built for that port.
 */
function localServer() {
  if (!process.env.PORT) {
    const running = readRunning();
    if (running)
      return { auth: running.auth.replace(/\/$/, ""), how: `npm start is running on port ${running.port}` };
  }
  try {
    return { auth: localUrls().auth, how: null };
  } catch (error) {
    console.error(`admin: ${error.message}`);
    process.exit(2);
  }
}

const COMMON_HELP = `Options of every command:
  --server <url>   the auth API (default: AUTH_URL, else the local server of npm start, ${localServer().auth})
  --json           print the API's answer as JSON (for scripts)
  --help           this help, or a command's: npm run admin -- <command> --help
Environment: AUTH_URL (the server), ADMIN_SECRET (else the local .dev.vars secret, for the local server only),
PORT (the local server's port, when npm start is not running or runs more than once). Secrets are read from the
environment only, never from flags: npm prints the command line it runs (\`npm run -s\` hides npm's own lines).`;

function overview() {
  const width = Math.max(...Object.keys(COMMANDS).map((name) => name.length));
  return [
    "usage: npm run admin -- <command> [options]",
    "",
    ...Object.entries(COMMANDS).map(([name, command]) => `  ${name.padEnd(width)}  ${command.summary}`),
    "",
    COMMON_HELP,
  ].join("\n");
}

const helpOf = (name) =>
  `usage: npm run admin -- ${COMMANDS[name].usage}\n\n${COMMANDS[name].summary}.\n\n${COMMON_HELP}`;

function query(params) {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined);
  return entries.length ? `?${new URLSearchParams(entries)}` : "";
}

const cell = (value) =>
  value === null || value === undefined
    ? "–"
    : Array.isArray(value)
      ? value.join(" ")
      : typeof value === "object"
        ? JSON.stringify(value)
        : String(value);

/** What every command uses: the server, the secret, the calls, and printing. */
function context(name, values) {
  const local = localServer();
  const server = (values.server ?? process.env.AUTH_URL ?? local.auth).replace(/\/$/, "");
  const fail = (message, code = 1) => {
    console.error(`admin: ${message}`);
    process.exit(code);
  };
  const cli = {
    fail,
    usageError: (message) => fail(`${name} ${message}\n\n${helpOf(name)}`, 2),
    secret() {
      if (process.env.ADMIN_SECRET) return process.env.ADMIN_SECRET;
      // The local secret goes to the local server only: never to whatever --server or AUTH_URL names.
      if (server !== local.auth)
        fail(`set ADMIN_SECRET for ${server} (the local .dev.vars secret is for ${local.auth})`);
      const secret = readDevVars().AUTH_ADMIN_SECRET;
      if (!secret)
        fail(`no AUTH_ADMIN_SECRET in .dev.vars for ${server}: run \`npm start\` first, or set ADMIN_SECRET`);
      return secret;
    },
    /** The service's base URL (no trailing slash), for commands that make their own requests (import-nhost). */
    server,
    /** The message for an admin API answer that is not ok: the URL, the status, the error, and for 401 which secret. */
    failure(method, url, status, answer, text) {
      const refused =
        status === 401
          ? process.env.ADMIN_SECRET
            ? `\nThe server refused ADMIN_SECRET: is ${server} the server it belongs to?`
            : `\nThe server refused the admin secret of .dev.vars: is ${server} the server of this checkout's npm start${local.how ? ` (${local.how})` : ""}? Another server: --server or AUTH_URL with ADMIN_SECRET`
          : "";
      return (
        `${method} ${url}: ${status} ${answer?.error ?? ""} ${answer?.message ?? text.slice(0, 200)}`.trim() +
        refused
      );
    },
    /** The message when the server does not answer at all. */
    unreachable(url) {
      return `cannot reach ${url}: is the service running (npm start)? Another server: --server or AUTH_URL${
        server === local.auth && !local.how ? ", or PORT for another local port" : ""
      }`;
    },
    async call(method, path, body) {
      const url = `${server}/admin${path}`;
      let response;
      try {
        response = await fetch(url, {
          method,
          headers: {
            "x-hasura-admin-secret": cli.secret(),
            ...(body ? { "content-type": "application/json" } : {}),
          },
          body: body ? JSON.stringify(body) : undefined,
        });
      } catch {
        fail(cli.unreachable(url));
      }
      const text = await response.text();
      let answer = null;
      try {
        answer = text ? JSON.parse(text) : null;
      } catch {}
      if (!response.ok) fail(cli.failure(method, url, response.status, answer, text));
      return answer;
    },
    async issuer() {
      try {
        const discovery = await (await fetch(`${server}/.well-known/openid-configuration`)).json();
        return discovery.issuer ?? server;
      } catch {
        return server;
      }
    },
    /** JSON with --json, else what `human` prints. */
    show(answer, human) {
      if (values.json) console.log(JSON.stringify(answer, null, 2));
      else human();
    },
    table(rows, columns) {
      if (rows.length === 0) return console.log("(none)");
      const cells = rows.map((row) => columns.map((column) => cell(row[column])));
      const widths = columns.map((column, i) =>
        Math.max(column.length, ...cells.map((row) => row[i].length)),
      );
      const line = (values) =>
        values
          .map((value, i) => value.padEnd(widths[i]))
          .join("  ")
          .trimEnd();
      console.log(line(columns));
      for (const row of cells) console.log(line(row));
    },
    record(object, keys = Object.keys(object)) {
      const present = keys.filter((key) => object[key] !== undefined);
      const width = Math.max(...present.map((key) => key.length));
      for (const key of present) console.log(`${key.padEnd(width)}  ${cell(object[key])}`);
    },
  };
  return cli;
}

function main(argv) {
  // The command comes first: npm run admin -- <command> [options].
  const name = argv[0]?.startsWith("-") ? undefined : argv[0];
  if (!name || name === "help") {
    const topic = name === "help" ? argv[1] : undefined;
    if (topic && !COMMANDS[topic]) {
      console.error(`admin: no command ${topic}\n\n${overview()}`);
      process.exit(2);
    }
    console.log(topic ? helpOf(topic) : overview());
    process.exit(name || argv.some((arg) => arg === "--help" || arg === "-h") ? 0 : 2);
  }
  const command = COMMANDS[name];
  if (!command) {
    console.error(`admin: no command ${name}\n\n${overview()}`);
    process.exit(2);
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: { ...COMMON, ...command.options } });
  } catch (error) {
    console.error(`admin: ${name}: ${error.message.replace(/\. To specify .*$/s, "")}\n\n${helpOf(name)}`);
    process.exit(2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(helpOf(name));
    process.exit(0);
  }
  const cli = context(name, values);
  const [, argument, ...extra] = positionals;
  if (command.argument && !argument) cli.usageError(`needs ${command.argument}`);
  if (extra.length > 0 || (!command.argument && !command.optionalArgument && argument))
    cli.usageError(`takes no argument ${extra[0] ?? argument}`);
  return command.run(cli, values, argument);
}

await main(process.argv.slice(2));
