import { eq } from "drizzle-orm";
import { isDevelopmentServer } from "../config";
import { type OAuth2ClientRow, oauth2Clients } from "../db/schema";
import type { Deps } from "../http/deps";
import { sha256Hex } from "../lib/crypto";
import { OAuth2Error } from "./errors";
import { registeredSettings } from "./registration";

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, contract §3.6): a `client_id` that is an
 * https URL names a JSON document the client publishes about itself, so an MCP host needs no registration at all. The
 * server fetches it (through `deps.outbound`, five seconds, 16 KiB, no redirects), checks it with the same rules as a
 * registration plus the draft's (its `client_id` is the URL exactly; `client_name` and `redirect_uris` are required;
 * it is a public client), keeps it in KV as long as its Cache-Control allows (one minute to a day), and mirrors it in
 * `oauth2_clients` (`registration = metadata-document`) so grants, codes and consents have a client row to belong to.
 * Loopback http document URLs only on a development server.
 */
const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 16 * 1024;
const MIN_TTL_SECONDS = 60; // KV's shortest expiry
const MAX_TTL_SECONDS = 86_400;
const DEFAULT_TTL_SECONDS = 300;

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Whether `clientId` names a metadata document (else it is an id this server issued). */
export function isMetadataDocumentId(deps: Deps, clientId: string): boolean {
  if (clientId.length > 2048 || clientId.includes("#")) return false;
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.username || url.password || url.pathname === "/") return false;
  if (url.protocol === "https:") return true;
  return url.protocol === "http:" && LOOPBACK.has(url.hostname) && isDevelopmentServer(deps.config);
}

const invalidDocument = (why: string) =>
  new OAuth2Error("invalid_client", `the client metadata document cannot be used: ${why}`);

/** The body, up to `MAX_BYTES`: a document larger than that is refused without reading the rest. */
async function boundedText(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BYTES) {
      await reader.cancel();
      throw invalidDocument(`larger than ${MAX_BYTES} bytes`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}

/** How long the document may be kept: its `Cache-Control: max-age`, bounded; `no-store`/`no-cache`: the minimum. */
function ttlOf(response: Response): number {
  const control = response.headers.get("cache-control") ?? "";
  if (/no-store|no-cache/i.test(control)) return MIN_TTL_SECONDS;
  const maxAge = /max-age=(\d+)/i.exec(control)?.[1];
  const seconds = maxAge === undefined ? DEFAULT_TTL_SECONDS : Number(maxAge);
  return Math.min(MAX_TTL_SECONDS, Math.max(MIN_TTL_SECONDS, seconds));
}

async function fetchDocument(deps: Deps, url: string): Promise<{ document: unknown; ttl: number }> {
  let response: Response;
  try {
    response = await deps.outbound(url, {
      redirect: "manual",
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    throw invalidDocument(`it could not be fetched (${error instanceof Error ? error.name : "error"})`);
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw invalidDocument(`it answered ${response.status} (redirects are not followed)`);
  }
  const text = await boundedText(response);
  try {
    return { document: JSON.parse(text), ttl: ttlOf(response) };
  } catch {
    throw invalidDocument("it is not JSON");
  }
}

const kvKey = async (url: string) => `oauth2:client-document:${await sha256Hex(url)}`;

/** The client a metadata document describes, from KV and D1 while fresh, else fetched and mirrored anew. */
export async function metadataDocumentClient(deps: Deps, url: string): Promise<OAuth2ClientRow> {
  const key = await kvKey(url);
  const fresh = await deps.env.OAUTH2_REQUESTS.get(key);
  if (fresh !== null) {
    const row = await deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, url)).get();
    if (row) return row;
  }
  const { document, ttl } = await fetchDocument(deps, url);
  const described = document as {
    client_id?: unknown;
    client_name?: unknown;
    redirect_uris?: unknown;
  } | null;
  if (described?.client_id !== url) throw invalidDocument("its client_id is not its own URL");
  if (typeof described.client_name !== "string" || !Array.isArray(described.redirect_uris)) {
    throw invalidDocument("client_name and redirect_uris are required");
  }
  let settings: ReturnType<typeof registeredSettings>;
  try {
    settings = registeredSettings(deps, { token_endpoint_auth_method: "none", ...described });
  } catch (error) {
    throw invalidDocument(error instanceof OAuth2Error ? error.description : "its metadata is invalid");
  }
  if (settings.tokenEndpointAuthMethod !== "none") throw invalidDocument("it must describe a public client");
  const now = deps.now();
  const values = {
    ...settings,
    accessTokenLifetime: deps.config.AUTH_OAUTH2_PROVIDER_ACCESS_TOKEN_TTL,
    refreshTokenLifetime: deps.config.AUTH_OAUTH2_PROVIDER_REFRESH_TOKEN_TTL,
    updatedAt: now,
  };
  const row = await deps.db
    .insert(oauth2Clients)
    .values({ clientId: url, secretHash: null, ...values, registration: "metadata-document", createdAt: now })
    .onConflictDoUpdate({ target: oauth2Clients.clientId, set: values })
    .returning()
    .get();
  await deps.env.OAUTH2_REQUESTS.put(key, "1", { expirationTtl: ttl });
  return row!;
}
