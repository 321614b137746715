// Creates an OAuth2 client on the local service (`npm start` running) through the admin API, with the admin secret
// that `npm start` generated into .dev.vars. The client secret is printed once; store it in the app's settings.
//
//   npm run oauth2:client -- --name "My App" --redirect-uri http://localhost:3000/callback [--public] [--scope graphql]
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    name: { type: "string" },
    "redirect-uri": { type: "string", multiple: true },
    scope: { type: "string", multiple: true },
    public: { type: "boolean", default: false },
    server: { type: "string", default: "http://localhost:8787/auth/v1" },
  },
});

function fail(message) {
  console.error(`oauth2:client: ${message}`);
  process.exit(1);
}

if (!values.name || !values["redirect-uri"]?.length) {
  fail(
    'usage: npm run oauth2:client -- --name "My App" --redirect-uri <uri> [--redirect-uri <uri>] [--public] [--scope <scope>]',
  );
}
if (!existsSync(".dev.vars")) fail("no .dev.vars here: run `npm start` first, from the project directory");
const line = readFileSync(".dev.vars", "utf8")
  .split("\n")
  .find((entry) => entry.startsWith("AUTH_ADMIN_SECRET="));
const adminSecret = line?.slice("AUTH_ADMIN_SECRET=".length).replace(/^'(.*)'$/, "$1");
if (!adminSecret) fail("AUTH_ADMIN_SECRET is not in .dev.vars");

const body = {
  clientName: values.name,
  redirectUris: values["redirect-uri"],
  ...(values.scope?.length
    ? { scopes: ["openid", "profile", "email", "offline_access", ...values.scope] }
    : {}),
  ...(values.public ? { tokenEndpointAuthMethod: "none" } : {}),
};
let response;
try {
  response = await fetch(`${values.server}/admin/oauth2/clients`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hasura-admin-secret": adminSecret },
    body: JSON.stringify(body),
  });
} catch {
  fail(`cannot reach ${values.server}: is \`npm start\` running?`);
}
const answer = await response.json();
if (response.status !== 201) fail(`the service answered ${response.status}: ${JSON.stringify(answer)}`);
console.log(JSON.stringify(answer, null, 2));
console.log(`\nIssuer (discovery): ${values.server}/.well-known/openid-configuration`);
if (answer.clientSecret) console.log("The client secret is shown this once; only its hash is stored.");
