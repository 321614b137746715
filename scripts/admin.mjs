// `npm run admin -- <command>`: a small command line over the admin API (contract §10) of a running service. Locally
// (`npm start`) it reads the admin secret that `npm start` generated into .dev.vars; against a deployment, set
// ADMIN_SECRET and pass --server https://auth.example.com/auth/v1.
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const USAGE = `usage: npm run admin -- <command> [options]

  secret                                   print the local admin secret (from .dev.vars)
  create-user --email <e> [--password <p>] [--display-name <n>] [--verified] [--role <r>]…
  list-users [--search <text>] [--limit <n>]
  get-user <id>
  disable-user <id> | enable-user <id> | delete-user <id>
  revoke-sessions <userId>
  create-client --name <n> [--redirect-uri <uri>]… [--public] [--native] [--scope <s>]… [--grant <g>]…
                [--resource <uri>]…       (a redirect URI is needed unless --grant leaves out authorization_code)
  list-clients
  list-keys | rotate-keys | delete-key <kid> [--force]   (--force: now, though its tokens may be valid: after a leak)
  audit [--user <id>] [--type <type>] [--limit <n>]

  --server <url>   the auth API (default http://localhost:8787/auth/v1)`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    server: { type: "string", default: "http://localhost:8787/auth/v1" },
    email: { type: "string" },
    password: { type: "string" },
    "display-name": { type: "string" },
    verified: { type: "boolean", default: false },
    role: { type: "string", multiple: true },
    search: { type: "string" },
    limit: { type: "string" },
    name: { type: "string" },
    "redirect-uri": { type: "string", multiple: true },
    scope: { type: "string", multiple: true },
    public: { type: "boolean", default: false },
    native: { type: "boolean", default: false },
    grant: { type: "string", multiple: true },
    resource: { type: "string", multiple: true },
    user: { type: "string" },
    type: { type: "string" },
    force: { type: "boolean", default: false },
  },
});

function fail(message) {
  console.error(`admin: ${message}`);
  process.exit(1);
}

function adminSecret() {
  if (process.env.ADMIN_SECRET) return process.env.ADMIN_SECRET;
  if (!existsSync(".dev.vars")) fail("no .dev.vars here: run `npm start` first (or set ADMIN_SECRET)");
  const line = readFileSync(".dev.vars", "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("AUTH_ADMIN_SECRET="));
  const secret = line?.slice("AUTH_ADMIN_SECRET=".length).replace(/^'(.*)'$/, "$1");
  if (!secret) fail("AUTH_ADMIN_SECRET is not in .dev.vars");
  return secret;
}

/** One admin API call; prints the answer as JSON, or fails with the service's error. */
async function call(method, path, body, expected = [200]) {
  let response;
  try {
    response = await fetch(`${values.server}/admin${path}`, {
      method,
      headers: {
        "x-hasura-admin-secret": adminSecret(),
        ...(body ? { "content-type": "application/json" } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
  } catch {
    fail(`cannot reach ${values.server}: is \`npm start\` running?`);
  }
  const answer = response.status === 204 ? null : await response.json();
  if (!expected.includes(response.status)) fail(`${response.status} ${JSON.stringify(answer)}`);
  if (answer !== null) console.log(JSON.stringify(answer, null, 2));
  return answer;
}

const query = (params) => {
  const entries = Object.entries(params).filter(([, value]) => value !== undefined);
  return entries.length ? `?${new URLSearchParams(entries)}` : "";
};

const [command, argument] = positionals;
const needArgument = (what) => argument ?? fail(`${command} needs ${what}\n\n${USAGE}`);

switch (command) {
  case "secret":
    console.log(adminSecret());
    break;
  case "create-user":
    if (!values.email) fail(`create-user needs --email\n\n${USAGE}`);
    await call(
      "POST",
      "/users",
      {
        email: values.email,
        ...(values.password ? { password: values.password } : {}),
        ...(values["display-name"] ? { displayName: values["display-name"] } : {}),
        ...(values.role?.length ? { allowedRoles: values.role, defaultRole: values.role[0] } : {}),
        emailVerified: values.verified,
      },
      [201],
    );
    break;
  case "list-users":
    await call("GET", `/users${query({ search: values.search, limit: values.limit })}`);
    break;
  case "get-user":
    await call("GET", `/users/${encodeURIComponent(needArgument("a user id"))}`);
    break;
  case "disable-user":
  case "enable-user":
    await call("PATCH", `/users/${encodeURIComponent(needArgument("a user id"))}`, {
      disabled: command === "disable-user",
    });
    break;
  case "delete-user":
    await call("DELETE", `/users/${encodeURIComponent(needArgument("a user id"))}`, undefined, [204]);
    console.log("deleted");
    break;
  case "revoke-sessions":
    await call(
      "DELETE",
      `/users/${encodeURIComponent(needArgument("a user id"))}/sessions`,
      undefined,
      [204],
    );
    console.log("every session revoked");
    break;
  case "create-client": {
    const grants = values.grant?.length ? values.grant : undefined;
    const needsRedirect = !grants || grants.includes("authorization_code");
    if (!values.name || (needsRedirect && !values["redirect-uri"]?.length))
      fail(`create-client needs --name, and --redirect-uri for the authorization_code grant\n\n${USAGE}`);
    const client = await call(
      "POST",
      "/oauth2/clients",
      {
        clientName: values.name,
        redirectUris: values["redirect-uri"] ?? [],
        ...(grants ? { grantTypes: grants } : {}),
        ...(values.native ? { applicationType: "native" } : {}),
        ...(values.resource?.length ? { resources: values.resource } : {}),
        ...(values.scope?.length
          ? { scopes: ["openid", "profile", "email", "offline_access", ...values.scope] }
          : {}),
        ...(values.public ? { tokenEndpointAuthMethod: "none" } : {}),
      },
      [201],
    );
    console.log(`\nIssuer (discovery): ${values.server}/.well-known/openid-configuration`);
    if (client.clientSecret) console.log("The client secret is shown this once; only its hash is stored.");
    break;
  }
  case "list-clients":
    await call("GET", "/oauth2/clients");
    break;
  case "list-keys":
    await call("GET", "/keys");
    break;
  case "rotate-keys":
    await call("POST", "/keys/rotate", undefined, [201]);
    break;
  case "delete-key":
    await call(
      "DELETE",
      `/keys/${encodeURIComponent(needArgument("a kid"))}${values.force ? "?force=true" : ""}`,
      undefined,
      [204],
    );
    console.log("deleted");
    break;
  case "audit":
    await call("GET", `/audit${query({ userId: values.user, type: values.type, limit: values.limit })}`);
    break;
  default:
    fail(command ? `unknown command ${command}\n\n${USAGE}` : USAGE);
}
