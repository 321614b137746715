import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { DRAIN_LIMIT } from "../../src/lib/refused-body";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY } from "../faces/supabase/support";
import { SERVER, service } from "../helpers";
import { PROVIDER_ON } from "../oauth2/support";
import { countedBody } from "../support/counted-body";

// Threat: a client (or a hostile one) streams a JSON body with no Content-Length, past the API's bound. Hono's
// `bodyLimit` stopped reading at the bound and left the body locked and unread: through wrangler dev (and workerd) the
// client still sending lost its connection (ECONNRESET / EPIPE, by hand at 8 MB, three of three) instead of getting
// the 413. Every JSON surface now reads past the rest up to a bound, then answers (src/http/body-limit.ts); a body that
// never ends is cancelled past that bound, so nobody holds a request open by sending forever.

// The Nhost API, the face and the authorization server's AuthZEN endpoints, all on.
const svc = service({
  ...PROVIDER_ON,
  AUTH_SUPABASE_API_ENABLED: "true",
  AUTH_SUPABASE_PUBLISHABLE_KEYS: PUBLISHABLE_KEY,
  AUTH_SUPABASE_SECRET_KEYS: SECRET_KEY,
});
const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };
const THREE_MB = new Uint8Array(3 * 1024 * 1024).fill(0x20);
const FIVE_MB = new Uint8Array(5 * 1024 * 1024).fill(0x20);

interface Surface {
  what: string;
  url: string;
  headers: Record<string, string>;
  bytes: Uint8Array;
  status: number;
  /** The surface's own error shape, as its clients read it. */
  shape: unknown;
}

const SURFACES: Surface[] = [
  {
    what: "the Nhost auth API",
    url: "/signin/email-password",
    headers: {},
    bytes: THREE_MB,
    status: 413,
    shape: { status: 413, error: "payload-too-large" },
  },
  {
    what: "the Supabase face's GoTrue",
    url: `${FACE}/auth/v1/token?grant_type=password`,
    headers: { apikey: PUBLISHABLE_KEY },
    bytes: THREE_MB,
    status: 413,
    shape: { code: 413, error_code: "request_too_large" },
  },
  {
    what: "Storage's bucket administration",
    url: `${SERVER}/storage/v1/buckets`,
    headers: ADMIN,
    bytes: THREE_MB,
    status: 413,
    shape: { error: { message: "request body exceeds 65536 bytes" } },
  },
  {
    what: "the Nhost import's batches (bound 4 MiB)",
    url: "/admin/import/nhost/users",
    headers: ADMIN,
    bytes: FIVE_MB,
    status: 413,
    shape: { status: 413, error: "payload-too-large" },
  },
  {
    what: "AuthZEN's evaluation",
    url: `${SERVER}/access/v1/evaluation`,
    headers: {},
    bytes: THREE_MB,
    status: 400,
    shape: "the request body exceeds 262144 bytes",
  },
];

const post = (surface: Surface, body: ReadableStream<Uint8Array>) =>
  svc.request("POST", surface.url, {
    headers: { ...surface.headers, "content-type": "application/json" },
    body,
  });

describe("JSON bodies streamed past their bound", () => {
  for (const surface of SURFACES) {
    it(`${surface.what}: refused in its own shape after the body is read to its end`, async () => {
      const { body, seen } = countedBody(surface.bytes);
      const response = await post(surface, body);
      expect(seen).toEqual({ read: surface.bytes.length, cancelled: false });
      expect(response.status).toBe(surface.status);
      expect(await response.json()).toMatchObject(surface.shape as object);
    });
  }

  it("a body that never ends is read past up to a bound, then cancelled, and answered", async () => {
    const { body, seen } = countedBody(new Uint8Array(65_536).fill(0x20), Number.POSITIVE_INFINITY);
    const response = await post(SURFACES[0]!, body);
    expect(response.status).toBe(413);
    expect(seen.cancelled).toBe(true);
    expect(seen.read).toBeGreaterThan(DRAIN_LIMIT);
    // The chunks the stream queues ahead, besides the bound.
    expect(seen.read).toBeLessThan(DRAIN_LIMIT + 1024 * 1024);
  });

  it("a streamed body within the bound is read whole and handled as any other", async () => {
    const json = new TextEncoder().encode(
      JSON.stringify({ email: "nobody-streamed@example.com", password: "x".repeat(20) }),
    );
    // Sent in 64 KiB chunks of the JSON repeated: one chunk here, since it is short.
    const { body, seen } = countedBody(json);
    const response = await svc.request("POST", "/signin/email-password", {
      headers: { "content-type": "application/json" },
      body,
    });
    expect(seen).toEqual({ read: json.length, cancelled: false });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: "invalid-email-password" });
  });
});
