// The SAML rows of `npm run bench:latency` (issue 48, "Round trips": "a SAML ACS where those exist"): an enterprise
// sign-in through an org's SAML connection, its two halves measured as paths of their own:
// - `POST /sso/saml/<id>/acs`, the Assertion Consumer Service: the IdP's cross-site form post of a signed response.
//   It verifies the response, spends its assertion ID (once) and keeps the identity on the pending sign-in its
//   `InResponseTo` names; 303 to the GET with a one-time `result`.
// - `GET /sso/saml/<id>/acs?result=…`, the same browser bounced back with its `sso-flow` cookie: the result taken, the
//   user found through the connection, the session started; 302 to `redirectTo` with a `refreshToken`.
// The IdP is a real one, the tests' (test/sso/saml-support/idp.ts: samlify, a maintained SAML 2.0 implementation,
// signing with xml-crypto under the committed test key), imported from there, not copied: esbuild bundles it for
// Node, as it is TypeScript. Every response is signed before a run (a response is single use, and autocannon's
// `setupRequest` cannot wait), each answering a sign-in started by `POST /sso/start` in a browser of its own.
import { createRequire } from "node:module";
import { join } from "node:path";
import { build } from "esbuild";

/** The tests' IdP, bundled for Node into `dir` (CommonJS: samlify's dependencies `require` Node's modules). */
export async function samlIdp(dir) {
  const outfile = join(dir, "saml-idp.cjs");
  await build({
    entryPoints: [join("test", "sso", "saml-support", "idp.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    // Not tsconfig.json: its `paths` send `samlify` to the tests' type declarations (test/types/samlify.d.ts).
    tsconfigRaw: {},
    logLevel: "warning",
  });
  return createRequire(import.meta.url)(outfile);
}

/**
 * An org owned by the bench user, its domain verified (the admin API's verify without DNS: there is none here) and a
 * SAML connection made from the IdP's metadata, as an operator sets one up; its SP entity ID and ACS URL read from
 * the SP metadata, as the IdP's administrator reads them.
 */
export async function samlConnection(ours, idp) {
  const admin = async (path, body) => {
    const answer = await fetch(`${ours.base}/admin${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hasura-admin-secret": ours.secrets.AUTH_ADMIN_SECRET,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!answer.ok) throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
    return answer.json();
  };
  const domain = `bench-${process.pid}.test`;
  const org = await admin("/orgs", { name: "Bench SSO", ownerUserId: ours.session.user.id });
  await admin(`/orgs/${org.id}/domains`, { domain });
  await admin(`/orgs/${org.id}/domains/${domain}/verify`);
  const connection = await admin(`/orgs/${org.id}/connections`, {
    type: "saml",
    metadataXml: idp.idpMetadataXml(),
  });
  const metadata = await (await fetch(`${ours.base}/sso/saml/${connection.id}/metadata`)).text();
  const spEntityId = /entityID="([^"]+)"/.exec(metadata)?.[1];
  const acsUrl = /AssertionConsumerService[^>]*Location="([^"]+)"/.exec(metadata)?.[1];
  if (!spEntityId || !acsUrl) throw new Error(`SP metadata: ${metadata}`);
  // The ACS at the bench's own address (the metadata's is the configured AUTH_SERVER_URL's).
  const acsUrlHere = `${ours.base}/sso/saml/${connection.id}/acs`;
  return { id: connection.id, spEntityId, acsUrl, acsUrlHere, email: `bench-sso@${domain}` };
}

/**
 * `count` sign-ins started (`POST /sso/start`, each in a fresh browser), each answered by a response the IdP signed
 * (RSA-SHA256, the assertion signed, as most IdPs do): the form body for the ACS and that browser's cookie.
 */
export async function samlSignIns(ours, idp, connection, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const started = await fetch(`${ours.base}/sso/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: connection.email }),
    });
    if (started.status !== 200) throw new Error(`sso/start: ${started.status} ${await started.text()}`);
    const cookie = started.headers
      .getSetCookie()
      .map((line) => line.split(";")[0])
      .join("; ");
    const requestXml = await inflate(new URL((await started.json()).url).searchParams.get("SAMLRequest"));
    const inResponseTo = /\sID="([^"]+)"/.exec(requestXml)?.[1];
    const xml = await idp.signedResponse({
      spEntityId: connection.spEntityId,
      acsUrl: connection.acsUrl,
      nameId: connection.email,
      inResponseTo,
    });
    out.push({ body: new URLSearchParams({ SAMLResponse: idp.toBase64(xml) }).toString(), cookie });
  }
  return out;
}

/** The XML of an HTTP-Redirect binding's `SAMLRequest` (raw DEFLATE, base64). */
async function inflate(samlRequest) {
  const stream = new Blob([Buffer.from(samlRequest ?? "", "base64")])
    .stream()
    .pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}

/** One whole sign-in, before anything is measured: the user is made (just in time) and linked by the first one. */
export async function samlWarmUp(ours, idp, connection) {
  const [signIn] = await samlSignIns(ours, idp, connection, 1);
  const posted = await fetch(connection.acsUrlHere, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: signIn.body,
    redirect: "manual",
  });
  const back = posted.headers.get("location");
  if (posted.status !== 303 || !back) throw new Error(`ACS: ${posted.status} ${await posted.text()}`);
  const finished = await fetch(`${connection.acsUrlHere}?${new URL(back).searchParams}`, {
    headers: { cookie: signIn.cookie },
    redirect: "manual",
  });
  const landed = new URL(finished.headers.get("location") ?? "http://x/");
  if (!landed.searchParams.get("refreshToken")) {
    throw new Error(`ACS GET: ${finished.status} ${landed}`);
  }
}

/** An answer's `Location` (autocannon gives the raw headers, named as the server spelled them). */
function locationOf(headers) {
  const name = Object.keys(headers).find((key) => key.toLowerCase() === "location");
  return (name && headers[name]) || "http://x/";
}

/**
 * The two rows: the POST spends the signed responses in `pending`, each answer's one-time result goes with its
 * browser's cookie to `results`, which the GET row spends. A 303 or 302 that is not a success (an `error` in the
 * query) is counted in `unexpected`, so that the run fails as on a non-2xx answer.
 */
export function samlPaths(connection, pending, results, unexpected) {
  const route = `/auth/v1/sso/saml/${connection.id}/acs`;
  return [
    [
      "SAML ACS (POST)",
      `POST ${route}`,
      {
        url: connection.acsUrlHere,
        // Read when the row starts: each profile signs its own responses first.
        get amount() {
          return pending.length;
        },
        expectStatuses: [303],
        unexpected: () => unexpected.post,
        requests: [
          {
            method: "POST",
            headers: { "content-type": "application/x-www-form-urlencoded" },
            setupRequest: (request, context) => {
              const signIn = pending.shift();
              context.cookie = signIn.cookie;
              return { ...request, body: signIn.body };
            },
            onResponse: (status, _body, context, headers) => {
              const result = new URL(locationOf(headers)).searchParams.get("result");
              if (status === 303 && result) results.push({ result, cookie: context.cookie });
              else unexpected.post++;
            },
          },
        ],
      },
    ],
    [
      "SAML ACS (GET)",
      `GET ${route}`,
      {
        url: connection.acsUrlHere,
        // Read when the row starts, after the POST row has filled `results`.
        get amount() {
          return results.length;
        },
        expectStatuses: [302],
        unexpected: () => unexpected.get,
        requests: [
          {
            method: "GET",
            setupRequest: (request) => {
              const { result, cookie } = results.shift();
              return { ...request, path: `${route}?result=${result}`, headers: { cookie } };
            },
            onResponse: (status, _body, _context, headers) => {
              const landed = new URL(locationOf(headers));
              if (status !== 302 || !landed.searchParams.get("refreshToken")) unexpected.get++;
            },
          },
        ],
      },
    ],
  ];
}
