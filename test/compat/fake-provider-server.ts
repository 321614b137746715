// The fake identity providers of test/fakes/outbound.js, served over loopback HTTP for `wrangler dev` (whose
// outbound calls go to the real network). `/github.fake/…` is GitHub's fake; paths without a known host prefix are
// GitHub's too, because the emails endpoint is derived from the profile URL's origin (contract §7).
import { createServer, type Server } from "node:http";
// @ts-expect-error: a plain Worker module, also loaded by miniflare in the workers tests
import fakes from "../fakes/outbound.js";
import { fakeGoogleFedcm } from "./fake-google-fedcm";

const HOSTS = ["github.fake", "oidc.fake", "apple.fake", "turnstile.fake"];

/**
 * Who the next person at a provider is, for a browser test that cannot add `fake_*` parameters to the authorization
 * URL (the browser reaches it through a redirect): `POST /__next-person` with the parameters; the next authorization
 * request without a `fake_id` gets them.
 */
let nextPerson: Record<string, string> | null = null;

/** An ID token of the fake Google's, with the claims given, signed with the key its JWKS publishes. */
async function mint(claims: Record<string, unknown>): Promise<string> {
  const response: Response = await fakes.fetch(
    new Request("https://oidc.fake/__mint", { method: "POST", body: JSON.stringify(claims) }),
  );
  return response.text();
}

export async function startFakeProviders(): Promise<{ origin: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (incoming, outgoing) => {
    const [, first, ...rest] = (incoming.url ?? "/").split("/");
    const host = HOSTS.includes(first ?? "") ? first! : "github.fake";
    const path = HOSTS.includes(first ?? "") ? `/${rest.join("/")}` : incoming.url!;
    const chunks: Buffer[] = [];
    for await (const chunk of incoming) chunks.push(chunk as Buffer);
    // Google's FedCM endpoints (One Tap), signed with the fake's key: fake-google-fedcm.ts.
    if (await fakeGoogleFedcm(incoming, outgoing, Buffer.concat(chunks), mint)) return;
    if (path === "/__next-person") {
      nextPerson = JSON.parse(Buffer.concat(chunks).toString()) as Record<string, string>;
      outgoing.writeHead(204).end();
      return;
    }
    const url = new URL(`https://${host}${path}`);
    if (url.pathname.endsWith("/authorize") && nextPerson && !url.searchParams.has("fake_id")) {
      for (const [name, value] of Object.entries(nextPerson)) url.searchParams.set(name, value);
      nextPerson = null;
    }
    const request = new Request(url, {
      method: incoming.method,
      headers: incoming.headers as Record<string, string>,
      body: incoming.method === "GET" || incoming.method === "HEAD" ? undefined : Buffer.concat(chunks),
    });
    const response: Response = await fakes.fetch(request);
    outgoing.writeHead(response.status, Object.fromEntries(response.headers));
    outgoing.end(Buffer.from(await response.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
