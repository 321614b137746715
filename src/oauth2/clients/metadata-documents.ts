import { eq } from "drizzle-orm";
import { type OAuth2ClientRow, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import {
  fetchOutbound,
  isJsonMediaType,
  type OutboundAnswer,
  OutboundFetchError,
  OutboundUrlRefused,
} from "../../lib/outbound-fetch";
import { checkOutboundUrl, outboundPolicy } from "../../lib/outbound-url";
import { refuseOverLimit } from "../../rate-limits/buckets";
import { addressKey } from "../../rate-limits/client-address";
import { OAuth2Error } from "../errors";
import { cachedClient, forgetOAuth2Client } from "./client-cache";
import { registeredSettings } from "./registration";

/**
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document, contract §3.6): a `client_id` that is
 * an https URL names a JSON document the client publishes about itself, so an MCP host needs no registration at all.
 * Accepted when `AUTH_OAUTH2_PROVIDER_CLIENT_ID_DOCUMENTS` is on (by default where registration is `open`: a document
 * is a registration by another name). The server fetches it under the outbound-URL policy (src/lib/outbound-url.ts:
 * never from this service's own hosts, five seconds, 16 KiB, JSON, no redirects), counts each fetch in the
 * registration rate limit, checks it with the same rules as a registration plus the draft's (its `client_id` is the
 * URL exactly; `client_name` and `redirect_uris` are required; it is a public client), and stores nothing yet.
 * Only a request that turns out valid keeps it (`keepFetchedClient`): a row in `oauth2_clients`
 * (`registration = metadata-document`) for grants, codes and consents to belong to, and a KV mark that spares
 * refetching for as long as its Cache-Control allows (one minute to a day).
 */
const LIMITS = {
  timeoutMs: 5000,
  maxBytes: 16 * 1024,
  accept: "application/json",
  mediaType: isJsonMediaType,
};
const MIN_TTL_SECONDS = 60; // KV's shortest expiry
const MAX_TTL_SECONDS = 86_400;
const DEFAULT_TTL_SECONDS = 300;

/** Whether `clientId` is a URL, so names a metadata document rather than an id this server issued (`oc_…`). */
export const isMetadataDocumentId = (clientId: string) => /^https?:\/\//i.test(clientId);

const refusedUrl = (why: string) =>
  new OAuth2Error("invalid_client", `this client_id cannot name a client metadata document: ${why}`);

/**
 * The one answer to a document that could not be had, whatever the cause: the cause (refused, slow, 404, a redirect,
 * HTML) would tell a caller which hosts and ports answer from here. It goes to the log.
 */
const unfetchable = (url: string, reason: string) =>
  new OAuth2Error(
    "invalid_client",
    "the client metadata document could not be fetched: it must answer 200 with a JSON object of at most " +
      `${LIMITS.maxBytes / 1024} KiB, without redirects, within ${LIMITS.timeoutMs / 1000} seconds`,
    undefined,
    `client metadata document ${url.slice(0, 300)}: ${reason}`,
  );

/** A document that was fetched but says something wrong: its author needs to know what. */
const invalidDocument = (why: string) =>
  new OAuth2Error("invalid_client", `the client metadata document cannot be used: ${why}`);

/** The draft's rules for the URL itself (§3): a path, no fragment, no dot segments. */
function documentUrlProblem(value: string): string | undefined {
  if (value.includes("#")) return "a fragment";
  if (/\/\.{1,2}(\/|$|\?)/.test(value)) return "a dot segment in the path";
  try {
    if (new URL(value).pathname === "/") return "no path";
  } catch {}
  return undefined;
}

/** How long the document may be kept: its `Cache-Control: max-age`, bounded; `no-store`/`no-cache`: the minimum. */
function ttlOf(headers: Headers): number {
  const control = headers.get("cache-control") ?? "";
  if (/no-store|no-cache/i.test(control)) return MIN_TTL_SECONDS;
  const maxAge = /max-age=(\d+)/i.exec(control)?.[1];
  const seconds = maxAge === undefined ? DEFAULT_TTL_SECONDS : Number(maxAge);
  return Math.min(MAX_TTL_SECONDS, Math.max(MIN_TTL_SECONDS, seconds));
}

const kvKey = async (url: string) => `oauth2:client-document:${await sha256Hex(url)}`;

/** A fetch is what a registration is here: counted per address in the same bucket (contract §3.6). */
async function countFetch(deps: Deps): Promise<void> {
  await refuseOverLimit(
    deps.env,
    deps.config.rateLimits,
    "REGISTRATION",
    { address: addressKey(deps.visitor.address ?? "unknown") },
    deps.now(),
  );
}

/**
 * Clients made from a document in this request and not stored yet, with what their document says and how long it may
 * be kept: the request that proves valid stores them (`keepFetchedClient`). Keyed by the row object, which only that
 * request holds, so an entry goes with it; plain data only (DESIGN: no I/O object outlives its request).
 */
const fetchedNotKept = new WeakMap<OAuth2ClientRow, { ttl: number; described: Partial<OAuth2ClientRow> }>();

async function fetchDocument(deps: Deps, url: string): Promise<OutboundAnswer> {
  const policy = outboundPolicy(deps.config);
  const verdict = checkOutboundUrl(url, policy);
  if (!verdict.ok) throw refusedUrl(verdict.reason);
  await countFetch(deps);
  try {
    return await fetchOutbound(deps.outbound, url, policy, LIMITS);
  } catch (error) {
    if (error instanceof OutboundFetchError || error instanceof OutboundUrlRefused) {
      throw unfetchable(url, error.reason);
    }
    throw error;
  }
}

/** The client a freshly fetched document describes, checked, in memory only. */
async function fetchedClient(deps: Deps, url: string): Promise<OAuth2ClientRow> {
  const problem = documentUrlProblem(url);
  if (problem) throw refusedUrl(problem);
  const answer = await fetchDocument(deps, url);
  if (answer.status !== 200) throw unfetchable(url, `answered ${answer.status}`);
  let document: unknown;
  try {
    document = JSON.parse(answer.text);
  } catch {
    throw unfetchable(url, "the body is not JSON");
  }
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw unfetchable(url, "the body is not a JSON object");
  }
  const metadata = document as { client_id?: unknown; client_name?: unknown; redirect_uris?: unknown };
  if (metadata.client_id !== url) throw invalidDocument("its client_id is not its own URL");
  if (typeof metadata.client_name !== "string" || !Array.isArray(metadata.redirect_uris)) {
    throw invalidDocument("client_name and redirect_uris are required");
  }
  let settings: ReturnType<typeof registeredSettings>;
  try {
    settings = registeredSettings(deps, { token_endpoint_auth_method: "none", ...metadata });
  } catch (error) {
    throw invalidDocument(error instanceof OAuth2Error ? error.description : "its metadata is invalid");
  }
  if (settings.tokenEndpointAuthMethod !== "none") throw invalidDocument("it must describe a public client");
  const now = deps.now();
  const described = {
    ...settings,
    accessTokenLifetime: deps.config.oauth2.accessTokenTtl,
    refreshTokenLifetime: deps.config.oauth2.refreshTokenTtl,
    updatedAt: now,
  };
  // A client stored from an earlier fetch keeps what is not the document's to say: an admin's narrowing of its
  // resources, its creation and its last use.
  const stored = await deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, url)).get();
  const row: OAuth2ClientRow = {
    clientId: url,
    secretHash: null,
    registration: "metadata-document",
    registeredByUserId: null,
    registrationTokenHash: null,
    resources: stored?.resources ?? null,
    trustedIssuers: stored?.trustedIssuers ?? [],
    vaultProviders: stored?.vaultProviders ?? [],
    // A document's client is public: no CIBA, which needs a client that proves itself.
    backchannelTokenDeliveryMode: null,
    backchannelClientNotificationEndpoint: null,
    backchannelOrganization: null,
    authorizationDetailsTypes: stored?.authorizationDetailsTypes ?? [],
    // FedCM origins are an admin's to allow (src/fedcm/), never a fetched document's.
    fedcmOrigins: stored?.fedcmOrigins ?? [],
    policyUri: stored?.policyUri ?? null,
    tosUri: stored?.tosUri ?? null,
    lastUsedAt: stored?.lastUsedAt ?? null,
    createdAt: stored?.createdAt ?? now,
    ...described,
  };
  fetchedNotKept.set(row, { ttl: ttlOf(answer.headers), described });
  return row;
}

/** The stored client of a document fetched lately (its KV mark stands), else nothing. */
async function keptClient(deps: Deps, url: string): Promise<OAuth2ClientRow | undefined> {
  if ((await deps.env.OAUTH2_REQUESTS.get(await kvKey(url))) === null) return undefined;
  return deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, url)).get();
}

/**
 * The client a metadata document describes: as stored while its document is fresh, else fetched anew (and stored
 * only by `keepFetchedClient`). `invalid_client` when documents are off or the document cannot be used.
 */
export async function metadataDocumentClient(deps: Deps, url: string): Promise<OAuth2ClientRow> {
  if (!deps.config.oauth2.clientIdDocuments) {
    throw new OAuth2Error("invalid_client", "client ID metadata documents are not accepted by this server");
  }
  return (await cachedClient(deps, url, () => keptClient(deps, url))) ?? fetchedClient(deps, url);
}

/**
 * After a request with `client` proved valid (an authorization request, a device authorization, a token request):
 * a client fetched from its document in this request is stored, or its stored row refreshed, and marked fresh for as
 * long as its document may be kept. Any other client: nothing to do.
 */
export async function keepFetchedClient(deps: Deps, client: OAuth2ClientRow): Promise<void> {
  const fetched = fetchedNotKept.get(client);
  if (!fetched) return;
  fetchedNotKept.delete(client);
  // What the document says replaces what an earlier one said; what an admin set (resources) and the use stay.
  await deps.db
    .insert(oauth2Clients)
    .values(client)
    .onConflictDoUpdate({ target: oauth2Clients.clientId, set: fetched.described })
    .run();
  await deps.env.OAUTH2_REQUESTS.put(await kvKey(client.clientId), "1", { expirationTtl: fetched.ttl });
  forgetOAuth2Client(client.clientId);
}
