// Crowds: hundreds of requests in flight over the hot paths, each answered in its own request context.
// Threat: a module-level cache that shares one request's in-flight I/O with the requests arriving meanwhile resumes
// them inside the first request's context; their answers fail with "Cannot perform I/O on behalf of a different
// request" (a text/plain 500 with a stack). Before the fix, 32 clients saw 9 of 6,815 session checks, 43 of 3,253
// refreshes and 81 of 3,000 sign-ins fail. The rule this guards: docs/decisions.md, "Sharing across requests".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: plain .mjs helpers shared with `npm run bench`
import { applyMigrations, bundleInBackground, workerFromBundle } from "../../bench/lib.mjs";
// @ts-expect-error: a plain .mjs helper shared with `npm start`
import { generateSecrets } from "../../scripts/secrets.mjs";
import { authUrl, PASSWORD, serverUrl, uniqueEmail, verifiedUser } from "./client";

/**
 * How long an isolate keeps its key set in the bundled deployments below: 10 s in production, 2.5 s here
 * (`TEST_KEY_SET_TTL_MS`, heeded only by a local server), so the crowd spans two refreshes in 6.5 s instead of 21.5.
 */
const KEY_SET_TTL_MS = 2_500;
const CLIENTS = 64;

const json = (body: unknown, token?: string): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
  body: JSON.stringify(body),
});

/** Tallies answers by status, keeping the first few failures' bodies for the assertion message. */
function tally() {
  const statuses: Record<string, number> = {};
  const failures: string[] = [];
  return {
    statuses,
    failures,
    async count(what: string, answer: Response): Promise<string> {
      const body = await answer.text();
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1;
      if (answer.status >= 400 && failures.length < 5)
        failures.push(`${what}: ${answer.status} ${body.slice(0, 240)}`);
      return body;
    },
    total: () => Object.values(statuses).reduce((sum, n) => sum + n, 0),
  };
}

/** A signed-in user of the service at `auth` (verification off there), a file of theirs and its ETag. */
async function userWithFile(auth: string, storage: string, email: string) {
  const signIn = async () =>
    (
      (await (await fetch(`${auth}/signin/email-password`, json({ email, password: PASSWORD }))).json()) as {
        session: { accessToken: string; refreshToken: string };
      }
    ).session;
  const session = await signIn();
  const bearer = { authorization: `Bearer ${session.accessToken}` };
  const form = new FormData();
  form.append("file[]", new File(["crowd"], "crowd.txt", { type: "text/plain" }));
  const upload = await fetch(`${storage}/files`, { method: "POST", headers: bearer, body: form });
  const fileUrl = `${storage}/files/${((await upload.json()) as { processedFiles: { id: string }[] }).processedFiles[0]!.id}`;
  const etag = (await fetch(fileUrl, { headers: bearer })).headers.get("etag")!;
  return { session, bearer, fileUrl, etag, signIn };
}

describe("a crowd against wrangler dev", () => {
  // 131 sign-ins (an argon2id hash each, 100 at once) and 530 requests in flight: 15 s here, 22 s on a busy machine.
  it("a few hundred concurrent session checks, verifications, refreshes with distinct tokens and sign-ins all answer 2xx", async () => {
    const { email } = await verifiedUser("crowd");
    const { session, bearer, fileUrl, etag, signIn } = await userWithFile(
      authUrl,
      `${serverUrl}/storage/v1`,
      email,
    );
    const refreshTokens = await Promise.all(
      Array.from({ length: 100 }, async () => (await signIn()).refreshToken),
    );
    const { statuses, failures, count, total } = tally();
    const requests: Promise<unknown>[] = [];
    for (let i = 0; i < 100; i++) {
      requests.push(
        fetch(`${authUrl}/user`, { headers: bearer }).then((a) => count("GET /user", a)),
        fetch(`${authUrl}/token/verify`, json({}, session.accessToken)).then((a) =>
          count("POST /token/verify", a),
        ),
        fetch(`${authUrl}/token`, json({ refreshToken: refreshTokens[i] })).then((a) =>
          count("POST /token", a),
        ),
        fetch(fileUrl, { headers: { ...bearer, "if-none-match": etag } }).then((a) =>
          count("GET file (304)", a),
        ),
        // The bytes themselves: the record comes from the isolate's memory or a replica session (issue 23).
        fetch(fileUrl, { headers: bearer }).then((a) => count("GET file", a)),
      );
    }
    for (let i = 0; i < 30; i++) {
      requests.push(
        fetch(`${authUrl}/signin/email-password`, json({ email, password: PASSWORD })).then((a) =>
          count("POST /signin/email-password", a),
        ),
      );
    }
    await Promise.all(requests);
    expect(failures, JSON.stringify(statuses)).toEqual([]);
    expect(statuses).toEqual({ 200: 430, 304: 100 });
    expect(total()).toBe(530);
  }, 120_000);
});

/**
 * The bundled Worker served by Miniflare as `npm run bench` serves it (no dev proxy in front, so requests arrive as
 * fast as production's would), under 64 clients for longer than two of the key set's refreshes. Measured on the code
 * before the fix (10-second refreshes then): the refresh at 20 s failed 23–37 answers in each of 3 runs (the first
 * one, at 10 s, never did), so the run spans two.
 */
describe("64 clients while the caches refresh (the bundled Worker)", () => {
  const dir = mkdtempSync(join(tmpdir(), "edge-auth-crowd-"));
  // Two deployments of the one bundle, each with state of its own: the two tests below run at once (the first one's
  // length is the key set's lifetime, not work), and the second one's switch of algorithm stays out of the first's.
  let deployments: { ready: Promise<URL>; dispose(): Promise<void> }[] = [];
  let origin: string;
  let switchingOrigin: string;
  const secrets = generateSecrets() as { AUTH_ADMIN_SECRET: string };
  // Started as the file loads, so that the bundling (a core of its own) runs while the crowd above keeps wrangler
  // dev's one thread busy; caught here, thrown by the beforeAll that needs it.
  const bundled = bundleInBackground(join(dir, "build")).then(
    () => null,
    (error: unknown) => error,
  );

  beforeAll(async () => {
    const failed = await bundled;
    if (failed) throw failed;
    deployments = ["state", "state-switching"].map((state) =>
      workerFromBundle(
        dir,
        {
          ...secrets,
          AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
          AUTH_RATE_LIMIT_ENABLE: "false",
          // argon2id at the suite's cost, as the compat server and the workers pool hash (src/lib/password.ts): the
          // 65 sign-ins below are the crowd's way to hold sessions, not what it measures.
          TEST_PASSWORD_HASH: "cheap",
          TEST_KEY_SET_TTL_MS: String(KEY_SET_TTL_MS),
        },
        { state },
      ),
    );
    const origins = await Promise.all(
      deployments.map(async (mf) => {
        const { origin } = await mf.ready;
        await applyMigrations(mf);
        return origin;
      }),
    );
    [origin, switchingOrigin] = origins as [string, string];
  }, 60_000);
  afterAll(async () => {
    await Promise.all(deployments.map((mf) => mf.dispose()));
    rmSync(dir, { recursive: true, force: true });
  });

  it.concurrent("64 clients' session checks across two refreshes of the key set: every answer 200", async () => {
    const auth = `${origin}/auth/v1`;
    const email = uniqueEmail("burst");
    const startedAt = Date.now();
    await fetch(`${auth}/signup/email-password`, json({ email, password: PASSWORD }));
    const { bearer } = await userWithFile(auth, `${origin}/storage/v1`, email);
    const { statuses, failures, count, total } = tally();
    const deadline = startedAt + 2 * KEY_SET_TTL_MS + 1_500;
    // The key set was first read by the sign-up: the isolate reads it again at about one and two lifetimes after.
    const secondRefresh = startedAt + 2 * KEY_SET_TTL_MS;
    let answeredAfterSecondRefresh = 0;
    const client = async () => {
      while (Date.now() < deadline) {
        await count("GET /user", await fetch(`${auth}/user`, { headers: bearer }));
        if (Date.now() > secondRefresh) answeredAfterSecondRefresh++;
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    expect(failures, JSON.stringify(statuses)).toEqual([]);
    expect(Object.keys(statuses)).toEqual(["200"]);
    // However fast the machine: every client asked, and the crowd was still in flight past the second refresh.
    expect(total()).toBeGreaterThanOrEqual(CLIENTS);
    expect(answeredAfterSecondRefresh).toBeGreaterThan(0);
  }, 90_000);

  // Issue 23: a switch of signing algorithm while 64 clients refresh and check their sessions. Every token they hold
  // was signed by the RS256 key or the new EdDSA one; each must verify with its own, every answer 200.
  it.concurrent("64 clients refresh and check sessions while the deployment switches to EdDSA: every answer 200", async () => {
    const auth = `${switchingOrigin}/auth/v1`;
    const email = uniqueEmail("switch");
    await fetch(`${auth}/signup/email-password`, json({ email, password: PASSWORD }));
    const sessions = await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        const answer = await fetch(`${auth}/signin/email-password`, json({ email, password: PASSWORD }));
        return ((await answer.json()) as { session: { accessToken: string; refreshToken: string } }).session;
      }),
    );
    const { statuses, failures, count, total } = tally();
    const algorithms = new Set<string>();
    const deadline = Date.now() + 6_000;
    // When the switch was answered: each client goes on past it, however slowly a busy machine serves them, so the
    // crowd is in flight on both sides of it whatever the throughput (a count of answers in the window depended on it).
    let switched = Number.POSITIVE_INFINITY;
    let clientsPastSwitch = 0;
    const client = async (session: { accessToken: string; refreshToken: string }) => {
      let current = session;
      let pastSwitch = false;
      while (Date.now() < deadline || !pastSwitch) {
        const startedAfterSwitch = Date.now() > switched;
        await count(
          "GET /user",
          await fetch(`${auth}/user`, { headers: { authorization: `Bearer ${current.accessToken}` } }),
        );
        const body = await count(
          "POST /token",
          await fetch(`${auth}/token`, json({ refreshToken: current.refreshToken })),
        );
        current = JSON.parse(body) as typeof current;
        algorithms.add(JSON.parse(atob(current.accessToken.split(".")[0]!)).alg);
        if (startedAfterSwitch && !pastSwitch) {
          pastSwitch = true;
          clientsPastSwitch++;
        }
      }
    };
    const switchAlgorithm = async () => {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      try {
        const rotated = await fetch(`${auth}/admin/keys/rotate`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-hasura-admin-secret": secrets.AUTH_ADMIN_SECRET },
          body: JSON.stringify({ alg: "EdDSA" }),
        });
        expect(rotated.status).toBe(201);
      } finally {
        // Failed or not, the clients' loop ends after a round past this moment.
        switched = Date.now();
      }
    };
    await Promise.all([switchAlgorithm(), ...sessions.map(client)]);
    expect(failures, JSON.stringify(statuses)).toEqual([]);
    expect(Object.keys(statuses)).toEqual(["200"]);
    expect(algorithms).toEqual(new Set(["RS256", "EdDSA"]));
    // Every client checked and refreshed after the switch, with the rounds before it.
    expect(clientsPastSwitch).toBe(CLIENTS);
    expect(total()).toBeGreaterThan(4 * CLIENTS);
  }, 90_000);
});
