// Fake outside world for the tests, bound as OUTBOUND. It answers like the services it stands in for.
// Have I Been Pwned range API: GET <base>/range/<5 hex> → "SUFFIX:COUNT" lines, with padding lines ":0".
const BREACHED = ["password123", "correct horse battery"];

async function sha1(text) {
  const digest = await crypto.subtle.digest("SHA-1", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)]
    .map((b) => b.toString(16).padStart(2, "0"))
    .join("")
    .toUpperCase();
}

/** A form body, decoded from its bytes (workerd warns when `.text()` meets a form's Content-Type). */
async function formOf(request) {
  return new URLSearchParams(new TextDecoder().decode(await request.arrayBuffer()));
}

// Twilio Messages API: the credentials below are the only ones accepted; +15005550001 is refused as Twilio refuses
// its "invalid number" test number. Accepted messages are kept and listed at GET /__sent?to=<number>.
export const TWILIO = { sid: "ACtest", token: "twilio-token" };
const sentSms = [];

async function twilio(request, url) {
  if (url.pathname === "/__sent") {
    return Response.json(sentSms.filter((m) => m.To === url.searchParams.get("to")).reverse());
  }
  const expected = `Basic ${btoa(`${TWILIO.sid}:${TWILIO.token}`)}`;
  if (request.headers.get("authorization") !== expected) {
    return Response.json({ code: 20003, message: "Authenticate", status: 401 }, { status: 401 });
  }
  if (request.method !== "POST" || url.pathname !== `/2010-04-01/Accounts/${TWILIO.sid}/Messages.json`) {
    return Response.json({ code: 20404, message: "not found", status: 404 }, { status: 404 });
  }
  const form = Object.fromEntries(await formOf(request));
  if (form.To === "+15005550001") {
    return Response.json(
      { code: 21211, message: `The 'To' number ${form.To} is not a valid phone number.` },
      {
        status: 400,
      },
    );
  }
  sentSms.push(form);
  return Response.json(
    { sid: `SM${crypto.randomUUID().replace(/-/g, "")}`, status: "queued" },
    { status: 201 },
  );
}

// Identity providers (src/providers). `github.fake` speaks GitHub's plain OAuth 2.0 (token, /user, /user/emails);
// `oidc.fake` speaks Google's OpenID Connect (PKCE, nonce, an RS256 ID token, JWKS, userinfo). A test plays the
// person at the provider: it calls the authorization URL the service built (through this binding) with `fake_*`
// parameters naming the user, and gets the redirect to the service's callback. What the token endpoints received is
// listed at GET https://<host>/__received?code=<code>.
export const PROVIDER_CLIENTS = {
  // Apple's client secret is an ES256 JWT: checked against the public key a test registers at POST /__key.
  "apple.fake": { id: "com.example.web", secret: null },
  "github.fake": { id: "gh-client", secret: "gh-secret" },
  "oidc.fake": { id: "google-client", secret: "google-secret" },
};
const grants = new Map();
/** How often a key set was fetched (GET /__jwks-fetches): the service must not refetch for every unknown key id. */
let jwksFetches = 0;
const received = new Map();
let signingKey;

const b64url = (bytes) =>
  btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
const b64urlText = (text) => b64url(new TextEncoder().encode(text));

async function keyPair() {
  signingKey ??= await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  return signingKey;
}

async function signJwt(claims) {
  const { privateKey } = await keyPair();
  const input = `${b64urlText(JSON.stringify({ alg: "RS256", kid: "fake-1", typ: "JWT" }))}.${b64urlText(JSON.stringify(claims))}`;
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    privateKey,
    new TextEncoder().encode(input),
  );
  return `${input}.${b64url(signature)}`;
}

async function s256(verifier) {
  return b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
}

const escapeHtml = (text) =>
  String(text).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );

/** Apple's form_post as a browser meets it: a page whose form posts the fields to the client's callback. */
function formPostPage(action, fields) {
  const inputs = Object.entries(fields)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join("");
  return new Response(
    `<!doctype html><title>Apple (fake)</title><form method="post" action="${escapeHtml(action)}">${inputs}<button type="submit">Continue</button></form>`,
    { headers: { "content-type": "text/html" } },
  );
}

/** The person at the provider: approve (or deny with fake_deny) and go back to the client with a code. */
function authorize(url, request) {
  const redirect = new URL(url.searchParams.get("redirect_uri"));
  redirect.searchParams.set("state", url.searchParams.get("state") ?? "");
  if (url.searchParams.get("fake_deny")) {
    redirect.searchParams.set("error", "access_denied");
    redirect.searchParams.set("error_description", "The user denied access");
    return Response.redirect(redirect.toString(), 302);
  }
  const code = `code-${crypto.randomUUID()}`;
  const confirm = url.searchParams.get("fake_confirm");
  grants.set(code, {
    clientId: url.searchParams.get("client_id"),
    redirectUri: url.searchParams.get("redirect_uri"),
    challenge: url.searchParams.get("code_challenge"),
    nonce: url.searchParams.get("nonce"),
    scope: url.searchParams.get("scope"),
    user: {
      id: url.searchParams.get("fake_id") ?? "1001",
      email: url.searchParams.get("fake_email") ?? undefined,
      verified: url.searchParams.get("fake_verified") !== "false",
      name: url.searchParams.get("fake_name") ?? "Octo Cat",
    },
    fail: url.searchParams.get("fake_fail"),
    // fake_expires_in: how long its access tokens live (the vault refreshes one that is about to end).
    expiresIn: Number(url.searchParams.get("fake_expires_in") ?? 3600),
    nonceOverride: url.searchParams.get("fake_nonce"),
  });
  if (url.searchParams.get("response_mode") === "form_post") {
    // What the browser would post to the callback; the name comes only now, never in the ID token.
    const user = JSON.stringify({
      name: { firstName: "Ada", lastName: "Lovelace" },
      email: grants.get(code).user.email,
    });
    const action = url.searchParams.get("redirect_uri");
    const fields = { code, state: url.searchParams.get("state"), user };
    // A browser gets the page; a test playing the browser gets the form's parts.
    if (request?.headers.get("accept")?.includes("text/html")) return formPostPage(action, fields);
    return Response.json({ action, fields });
  }
  redirect.searchParams.set("code", code);
  // fake_confirm: a page with a link back instead of the redirect, so that a test can stop before the callback.
  if (confirm) {
    return new Response(
      `<!doctype html><title>Provider (fake)</title><a id="continue" href="${escapeHtml(redirect.toString())}">Continue</a>`,
      { headers: { "content-type": "text/html" } },
    );
  }
  return Response.redirect(redirect.toString(), 302);
}

let appleKey;
const appleSecrets = [];

/** Apple's rules for its client secret: ES256 by the team's key, iss = team, sub = client id, aud = Apple, unexpired. */
async function appleSecretValid(jwt) {
  const [header, payload, signature] = (jwt ?? "").split(".");
  if (!appleKey || !signature) return false;
  const fromB64 = (part) =>
    Uint8Array.from(atob(part.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const key = await crypto.subtle.importKey("jwk", appleKey, { name: "ECDSA", namedCurve: "P-256" }, false, [
    "verify",
  ]);
  const valid = await crypto.subtle.verify(
    { name: "ECDSA", hash: "SHA-256" },
    key,
    fromB64(signature),
    new TextEncoder().encode(`${header}.${payload}`),
  );
  const claims = JSON.parse(new TextDecoder().decode(fromB64(payload)));
  const head = JSON.parse(new TextDecoder().decode(fromB64(header)));
  appleSecrets.push({ header: head, claims });
  return (
    valid &&
    head.alg === "ES256" &&
    claims.iss === "TEAM123456" &&
    claims.sub === "com.example.web" &&
    claims.aud === "https://appleid.apple.com" &&
    claims.exp > Date.now() / 1000
  );
}

async function secretOk(host, secret) {
  const client = PROVIDER_CLIENTS[host];
  return client.secret === null ? appleSecretValid(secret) : secret === client.secret;
}

async function token(request, url) {
  const client = PROVIDER_CLIENTS[url.hostname];
  const form = await formOf(request);
  const basic = request.headers.get("authorization");
  const [id, secret] = basic
    ? atob(basic.slice(6)).split(":").map(decodeURIComponent)
    : [form.get("client_id"), form.get("client_secret")];
  if (form.get("grant_type") === "refresh_token") {
    const presented = form.get("refresh_token");
    if (id !== client.id || !(await secretOk(url.hostname, secret)) || !presented?.startsWith("refresh-")) {
      return Response.json({ error: "invalid_grant" }, { status: 400 });
    }
    // A refresh token the fake issued at a code exchange rotates (RFC 9700 §4.14.2): used once, or revoked, it is
    // refused; its user's provider can be "down" (POST /__down?user=<id>). Others keep the old lenient answer.
    const issued = refreshTokens.get(presented);
    if (issued) {
      if (downUsers.has(issued.user.id)) return new Response("<html>down</html>", { status: 503 });
      if (issued.spent) return Response.json({ error: "invalid_grant" }, { status: 400 });
      issued.spent = true;
      refreshCounts.set(issued.user.id, (refreshCounts.get(issued.user.id) ?? 0) + 1);
    }
    const accessToken = `access-${crypto.randomUUID()}`;
    const refreshToken = `refresh-${crypto.randomUUID()}`;
    if (issued) {
      tokensToUsers.set(accessToken, issued.user);
      refreshTokens.set(refreshToken, { user: issued.user, expiresIn: issued.expiresIn, spent: false });
    }
    return Response.json({
      access_token: accessToken,
      token_type: "bearer",
      expires_in: issued?.expiresIn ?? 3600,
      refresh_token: refreshToken,
    });
  }
  const code = form.get("code");
  const grant = grants.get(code);
  received.set(code, { ...Object.fromEntries(form), authorization: basic });
  if (id !== client.id || !(await secretOk(url.hostname, secret)))
    return Response.json({ error: "invalid_client" }, { status: 401 });
  if (!grant || grant.redirectUri !== form.get("redirect_uri"))
    return Response.json({ error: "invalid_grant" }, { status: 400 });
  grants.delete(code);
  if (grant.challenge && (await s256(form.get("code_verifier") ?? "")) !== grant.challenge) {
    return Response.json(
      { error: "invalid_grant", error_description: "PKCE verification failed" },
      { status: 400 },
    );
  }
  // A provider that never answers: the service gives up after its timeout.
  if (grant.fail === "hang") await new Promise((resolve) => setTimeout(resolve, 60_000));
  if (grant.fail === "token") return new Response("<html>upstream error</html>", { status: 502 });
  if (grant.fail === "garbage")
    return new Response("not json at all", { headers: { "content-type": "application/json" } });
  const accessToken = `access-${grant.user.id}-${grant.fail === "profile" ? "broken" : "ok"}-${crypto.randomUUID()}`;
  tokensToUsers.set(accessToken, grant.user);
  const refreshToken = `refresh-${crypto.randomUUID()}`;
  refreshTokens.set(refreshToken, { user: grant.user, expiresIn: grant.expiresIn, spent: false });
  const answer = {
    access_token: accessToken,
    token_type: "bearer",
    expires_in: grant.expiresIn,
    refresh_token: refreshToken,
    scope: grant.scope,
  };
  if (url.hostname === "oidc.fake" || url.hostname === "apple.fake") {
    const now = Math.floor(Date.now() / 1000);
    answer.id_token = await signJwt({
      iss: `https://${url.hostname}`,
      sub: grant.user.id,
      aud: grant.clientId,
      iat: now,
      exp: now + 300,
      nonce: grant.nonceOverride ?? grant.nonce,
      email: grant.user.email,
      // Apple writes booleans as strings.
      email_verified: url.hostname === "apple.fake" ? String(grant.user.verified) : grant.user.verified,
      name: grant.user.name,
      picture: "https://oidc.fake/avatar.png",
      locale: "fr-FR",
    });
  }
  return Response.json(answer);
}

const tokensToUsers = new Map();
/** Refresh tokens issued at code exchanges and refreshes: their user, and whether they were spent or revoked. */
const refreshTokens = new Map();
/** Users whose provider answers 503 to a refresh (POST /__down?user=…, DELETE to heal). */
const downUsers = new Set();
/** Refreshes and RFC 7009 revocations per user (GET /__counts?user=…). */
const refreshCounts = new Map();
const revocations = new Map();

/** RFC 7009 §2: the client authenticates; an unknown token is no error (§2.2). */
async function revoke(request, url) {
  const client = PROVIDER_CLIENTS[url.hostname];
  const form = await formOf(request);
  if (form.get("client_id") !== client.id || !(await secretOk(url.hostname, form.get("client_secret")))) {
    return Response.json({ error: "invalid_client" }, { status: 401 });
  }
  const issued = refreshTokens.get(form.get("token"));
  if (issued) {
    issued.spent = true;
    revocations.set(issued.user.id, (revocations.get(issued.user.id) ?? 0) + 1);
  }
  return new Response(null, { status: 200 });
}

function userOf(request) {
  const accessToken = request.headers.get("authorization")?.replace(/^Bearer /, "");
  if (accessToken?.includes("-broken-")) return "broken";
  return tokensToUsers.get(accessToken);
}

async function identityProvider(request, url) {
  // An ID token as the provider would give a native app: the test names the claims, the fake's key signs them.
  if (url.pathname === "/__key") {
    appleKey = await request.json();
    return new Response(null, { status: 204 });
  }
  if (url.pathname === "/__secrets") return Response.json(appleSecrets);
  if (url.pathname === "/__mint") return new Response(await signJwt(await request.json()));
  if (url.pathname === "/__received")
    return Response.json(received.get(url.searchParams.get("code")) ?? null);
  if (["/authorize", "/login/oauth/authorize", "/auth/authorize"].includes(url.pathname))
    return authorize(url, request);
  if (["/token", "/login/oauth/access_token", "/auth/token"].includes(url.pathname))
    return token(request, url);
  if (url.pathname === "/__jwks-fetches") return Response.json(jwksFetches);
  if (url.pathname === "/revoke" && request.method === "POST") return revoke(request, url);
  if (url.pathname === "/__down") {
    const user = url.searchParams.get("user");
    if (request.method === "DELETE") downUsers.delete(user);
    else downUsers.add(user);
    return new Response(null, { status: 204 });
  }
  if (url.pathname === "/__counts") {
    const user = url.searchParams.get("user");
    return Response.json({
      refreshes: refreshCounts.get(user) ?? 0,
      revocations: revocations.get(user) ?? 0,
    });
  }
  if (url.pathname === "/jwks") {
    jwksFetches++;
    const { publicKey } = await keyPair();
    return Response.json({
      keys: [
        { ...(await crypto.subtle.exportKey("jwk", publicKey)), kid: "fake-1", alg: "RS256", use: "sig" },
      ],
    });
  }
  const user = userOf(request);
  if (user === "broken") return new Response("boom", { status: 500 });
  if (!user) return Response.json({ message: "Bad credentials" }, { status: 401 });
  if (url.pathname === "/user")
    return Response.json({
      id: Number(user.id),
      login: "octocat",
      name: user.name,
      avatar_url: "https://github.fake/octocat.png",
    });
  if (url.pathname === "/user/emails") {
    return Response.json(
      user.email
        ? [
            { email: "other@example.com", primary: false, verified: true },
            { email: user.email, primary: true, verified: user.verified },
          ]
        : [],
    );
  }
  if (url.pathname === "/userinfo") {
    return Response.json({ sub: user.id, email: user.email, email_verified: user.verified, name: user.name });
  }
  return new Response("not found", { status: 404 });
}

// Client ID metadata documents (src/oauth2/clients/metadata-documents.ts) at https://client-docs.fake/<path>: a test puts one
// with PUT /__doc?path=<path>&cache-control=<value>&content-type=<value> (the body is served as is, as
// application/json unless said otherwise); GET /__fetches?path=<path> says how often the service fetched it.
// /redirect/<anything> answers 302, /big.json is larger than any document may be, /slow/<anything> answers after
// 8 s (past any fetch's time), /stall/<anything> sends its headers and a first piece at once, the rest after 8 s.
const clientDocs = new Map();
const docFetches = new Map();

async function clientDocuments(request, url) {
  if (url.pathname === "/__doc" && request.method === "PUT") {
    const path = url.searchParams.get("path");
    clientDocs.set(path, {
      body: new TextDecoder().decode(await request.arrayBuffer()),
      cacheControl: url.searchParams.get("cache-control"),
      contentType: url.searchParams.get("content-type"),
    });
    return new Response(null, { status: 204 });
  }
  if (url.pathname === "/__fetches") return Response.json(docFetches.get(url.searchParams.get("path")) ?? 0);
  docFetches.set(url.pathname, (docFetches.get(url.pathname) ?? 0) + 1);
  if (url.pathname.startsWith("/redirect/")) {
    return new Response(null, {
      status: 302,
      headers: { location: "https://client-docs.fake/elsewhere.json" },
    });
  }
  if (url.pathname.startsWith("/slow/")) {
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    return new Response("{}", { headers: { "content-type": "application/json" } });
  }
  if (url.pathname.startsWith("/stall/")) {
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const rest = async () => {
      await writer.write(new TextEncoder().encode('{"client_id":'));
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      await writer.write(new TextEncoder().encode("null}"));
      await writer.close();
    };
    rest().catch(() => {});
    return new Response(readable, { headers: { "content-type": "application/json" } });
  }
  if (url.pathname === "/big.json") {
    return new Response(JSON.stringify({ client_id: url.toString(), padding: "x".repeat(40_000) }), {
      headers: { "content-type": "application/json" },
    });
  }
  const doc = clientDocs.get(url.pathname);
  if (!doc) return new Response("not found", { status: 404 });
  return new Response(doc.body, {
    headers: {
      "content-type": doc.contentType ?? "application/json",
      ...(doc.cacheControl ? { "cache-control": doc.cacheControl } : {}),
    },
  });
}

// Cloudflare Turnstile's siteverify, as Cloudflare documents it: POST JSON or a form with `secret`, `response`,
// `remoteip` and `idempotency_key`. The secret below is the only one accepted. A token names its outcome:
// `pass:<hostname>:<action>:<anything>` (action may be empty) succeeds once, as a real token does; anything else is refused
// (`invalid-input-response`); a token seen before is `timeout-or-duplicate`, unless the idempotency key is the one
// it was first verified with (Cloudflare answers a retry with the same key as the first time). Path prefixes
// misbehave on purpose: /slow (never answers in time), /stall (headers and half a body at once, the rest after 8 s), /down (503), /garbage (HTML), /shape (JSON of another shape),
// /flaky (503 on the first call of each idempotency key, then the real answer). GET /__verified?response=<token>
// lists the bodies received for a token.
const TURNSTILE_SECRET = "turnstile-secret";
const turnstileSeen = new Map();
const turnstileBodies = new Map();
const flakyKeys = new Set();

async function siteverify(request, url) {
  if (url.pathname === "/__verified") {
    return Response.json(turnstileBodies.get(url.searchParams.get("response")) ?? []);
  }
  const mode = url.pathname.split("/")[1];
  if (mode === "slow") {
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    return new Response("too late", { status: 504 });
  }
  if (mode === "stall") {
    const { readable, writable } = new TransformStream();
    const writer = writable.getWriter();
    const rest = async () => {
      await writer.write(new TextEncoder().encode('{"success":'));
      await new Promise((resolve) => setTimeout(resolve, 8_000));
      await writer.write(new TextEncoder().encode('false,"error-codes":["late"]}'));
      await writer.close();
    };
    rest().catch(() => {});
    return new Response(readable, { headers: { "content-type": "application/json" } });
  }
  if (mode === "down") return new Response("upstream unavailable", { status: 503 });
  if (mode === "garbage")
    return new Response("<html>challenge</html>", { headers: { "content-type": "text/html" } });
  if (mode === "shape") return Response.json({ ok: true });
  const type = request.headers.get("content-type") ?? "";
  const body = type.includes("json") ? await request.json() : Object.fromEntries(await formOf(request));
  if (mode === "flaky" && !flakyKeys.has(body.idempotency_key)) {
    flakyKeys.add(body.idempotency_key);
    return new Response("try again", { status: 502 });
  }
  turnstileBodies.set(body.response, [...(turnstileBodies.get(body.response) ?? []), body]);
  if (body.secret !== TURNSTILE_SECRET) {
    return Response.json({ success: false, "error-codes": ["invalid-input-secret"] });
  }
  const token = String(body.response ?? "");
  const first = turnstileSeen.get(token);
  if (first !== undefined && first !== body.idempotency_key) {
    return Response.json({ success: false, "error-codes": ["timeout-or-duplicate"] });
  }
  turnstileSeen.set(token, body.idempotency_key);
  const [verdict, hostname, action = ""] = token.split(":");
  if (verdict !== "pass" || !hostname) {
    return Response.json({ success: false, "error-codes": ["invalid-input-response"] });
  }
  return Response.json({
    success: true,
    challenge_ts: new Date().toISOString(),
    hostname,
    action,
    cdata: "",
    "error-codes": [],
  });
}

// Webhook receivers (src/webhooks/) at https://webhooks.fake/<path>: every POST is kept, body and headers as they came
// (a test verifies the signatures itself, with the `standardwebhooks` library), and answered by the path's plan:
// PUT /__plan?path=<path>[&match=<text>] with a JSON array of steps, used one per POST (with `match`, per POST whose
// body holds that text: another test's events may reach the same receiver), then 200 for ever. A step is a status to
// answer (500, 302, 502 as a proxy answers for a receiver that is down…) or "ok". GET /__received?path=<path> lists
// what came, oldest first, each with the answer it got.
const webhookPlans = new Map();
const webhookPosts = new Map();

async function webhookReceiver(request, url) {
  const path = url.searchParams.get("path");
  if (url.pathname === "/__plan" && request.method === "PUT") {
    webhookPlans.set(path, { steps: await request.json(), match: url.searchParams.get("match") });
    return new Response(null, { status: 204 });
  }
  if (url.pathname === "/__received") return Response.json(webhookPosts.get(path) ?? []);
  const body = new TextDecoder().decode(await request.arrayBuffer());
  const plan = webhookPlans.get(url.pathname);
  const step = (plan && (!plan.match || body.includes(plan.match)) ? plan.steps.shift() : undefined) ?? "ok";
  const post = { body, headers: Object.fromEntries(request.headers), answer: step };
  webhookPosts.set(url.pathname, [...(webhookPosts.get(url.pathname) ?? []), post]);
  if (typeof step === "number") {
    return new Response(`receiver says ${step}`, {
      status: step,
      headers: step >= 300 && step < 400 ? { location: "https://elsewhere.fake/" } : {},
    });
  }
  return new Response("thanks", { status: 200 });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.hostname === "webhooks.fake") return webhookReceiver(request, url);
    if (url.hostname === "client-docs.fake") return clientDocuments(request, url);
    if (url.hostname === "api.twilio.com") return twilio(request, url);
    if (url.hostname === "turnstile.fake") return siteverify(request, url);
    if (url.hostname in PROVIDER_CLIENTS) return identityProvider(request, url);
    if (url.hostname === "hibp.test") {
      if (url.pathname.startsWith("/down/")) return new Response("unavailable", { status: 503 });
      const prefix = url.pathname.split("/").pop();
      const lines = ["0018A45C4D1DEF81644B54AB7F969B88D65:0"];
      for (const password of BREACHED) {
        const hash = await sha1(password);
        if (hash.startsWith(prefix)) lines.push(`${hash.slice(5)}:42`);
      }
      return new Response(lines.join("\r\n"));
    }
    return new Response("no fake for this host", { status: 502 });
  },
};
