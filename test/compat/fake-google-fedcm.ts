// The fake Google as a FedCM identity provider (W3C Federated Credential Management), on the fake providers' loopback
// server (fake-provider-server.ts), for Google's One Tap on the hosted sign-in page (src/fedcm/one-tap.ts) in
// Chromium: the well-known file at the origin's root, the config file where Google serves its own (`/gsi/fedcm.json`,
// under the `/oidc.fake` prefix), the accounts and ID assertion endpoints. The ID token it hands the page is signed
// by the fake's key, the one its JWKS publishes (test/fakes/outbound.js `/__mint`), for the `client_id` the browser
// sends and with the `nonce` the page passed in `params` (or the older top-level `nonce`).
//
// The person "at Google" is whoever the test signed in at `GET /oidc.fake/gsi/__signin?sub=&email=&name=`: a cookie
// the FedCM endpoints read (SameSite=None, as Chrome sends them only those) and `Set-Login: logged-in`. Without it
// the accounts endpoint names nobody (an empty list, as the spec has it: no failed request on the page), so a browser
// of another test file shows no prompt. `POST /oidc.fake/gsi/__status`
// with `500` makes the config file answer 500 (Google's outage), `200` puts it back; `GET …/__config-fetches` counts
// the browser's reads of it.
import type { IncomingMessage, ServerResponse } from "node:http";

const PREFIX = "/oidc.fake/gsi";
const COOKIE = "fake_google";

interface Person {
  sub: string;
  email: string;
  name: string;
}

let configStatus = 200;
let configFetches = 0;

function personOf(incoming: IncomingMessage): Person | null {
  const cookie = (incoming.headers.cookie ?? "")
    .split(";")
    .map((part) => part.trim())
    .find((part) => part.startsWith(`${COOKIE}=`));
  if (!cookie) return null;
  return JSON.parse(Buffer.from(cookie.slice(COOKIE.length + 1), "base64url").toString()) as Person;
}

const json = (
  outgoing: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) => outgoing.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(body));

/**
 * Answers a FedCM request of the fake Google, or returns false for any other path. `mint` signs claims with the
 * fake's key; `body` is the request's.
 */
export async function fakeGoogleFedcm(
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  body: Buffer,
  mint: (claims: Record<string, unknown>) => Promise<string>,
): Promise<boolean> {
  const url = new URL(incoming.url ?? "/", `http://${incoming.headers.host}`);
  const base = `${url.origin}${PREFIX}`;
  const fromPrompt = incoming.headers["sec-fetch-dest"] === "webidentity";
  switch (`${incoming.method} ${url.pathname}`) {
    // § The Well-Known File: at the root of the config file's origin (loopback: no registrable domain to climb to).
    case "GET /.well-known/web-identity":
      json(outgoing, 200, { provider_urls: [`${base}/fedcm.json`] });
      return true;
    // § The config file.
    case `GET ${PREFIX}/fedcm.json`:
      configFetches++;
      if (configStatus !== 200) {
        outgoing.writeHead(configStatus, { "content-type": "text/plain" }).end("unavailable");
        return true;
      }
      json(outgoing, 200, {
        accounts_endpoint: `${base}/fedcm/accounts`,
        id_assertion_endpoint: `${base}/fedcm/assertion`,
        login_url: `${base}/__signin`,
        branding: { name: "Google (fake)" },
      });
      return true;
    // § Accounts endpoint: the person signed in here, by the cookie only the browser's prompt sends.
    case `GET ${PREFIX}/fedcm/accounts`: {
      // Nobody signed in: an empty list, which is how the spec has an IdP say so (the browser then holds its login
      // status as logged-out and shows nothing), not an error status, which Chromium reports as a failed request on
      // the page of every compat file that opens the hosted sign-in.
      const person = fromPrompt ? personOf(incoming) : null;
      const accounts = person ? [{ id: person.sub, email: person.email, name: person.name }] : [];
      json(outgoing, 200, { accounts });
      return true;
    }
    // § Identity assertion endpoint: an ID token for the client the page named, with the page's nonce, to its origin.
    case `POST ${PREFIX}/fedcm/assertion`: {
      const origin = incoming.headers.origin ?? "";
      const form = new URLSearchParams(body.toString());
      const person = fromPrompt ? personOf(incoming) : null;
      const cors = { "access-control-allow-origin": origin, "access-control-allow-credentials": "true" };
      if (!person || form.get("account_id") !== person.sub) {
        json(outgoing, 401, { error: { code: "access_denied" } }, cors);
        return true;
      }
      const params = JSON.parse(form.get("params") ?? "{}") as { nonce?: string };
      const now = Math.floor(Date.now() / 1000);
      const token = await mint({
        iss: "https://oidc.fake",
        aud: form.get("client_id"),
        sub: person.sub,
        email: person.email,
        email_verified: true,
        name: person.name,
        nonce: params.nonce ?? form.get("nonce") ?? undefined,
        iat: now,
        exp: now + 600,
      });
      json(outgoing, 200, { token }, cors);
      return true;
    }
    case `GET ${PREFIX}/__signin`: {
      const person: Person = {
        sub: url.searchParams.get("sub") ?? "",
        email: url.searchParams.get("email") ?? "",
        name: url.searchParams.get("name") ?? "",
      };
      const value = Buffer.from(JSON.stringify(person)).toString("base64url");
      outgoing
        .writeHead(200, {
          "content-type": "text/html",
          "set-cookie": `${COOKIE}=${value}; Path=${PREFIX}; HttpOnly; Secure; SameSite=None`,
          "set-login": "logged-in",
        })
        .end(
          `<!doctype html><title>Google (fake)</title><p>Signed in as ${person.email.replace(/[<&]/g, "")}</p>`,
        );
      return true;
    }
    case `POST ${PREFIX}/__status`:
      configStatus = Number(body.toString()) || 200;
      outgoing.writeHead(204).end();
      return true;
    case `GET ${PREFIX}/__config-fetches`:
      json(outgoing, 200, configFetches);
      return true;
    default:
      return false;
  }
}
