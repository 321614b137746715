import { eq } from "drizzle-orm";
import { type OAuth2ClientRow, oauth2Clients } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { sha256Hex, timingSafeEqualString } from "../../lib/crypto";
import { OAuth2Error } from "../errors";
import { assertedClientId, verifyClientAssertion } from "./client-assertion";
import { cachedClient } from "./client-cache";
import { isMetadataDocumentId, metadataDocumentClient } from "./metadata-documents";

/**
 * The client `clientId` names: a row of `oauth2_clients`, or for an https URL the client its metadata document
 * describes (metadata-documents.ts). Kept ten seconds per isolate (client-cache.ts).
 */
export async function findOAuth2Client(deps: Deps, clientId: string): Promise<OAuth2ClientRow | undefined> {
  if (isMetadataDocumentId(clientId)) return metadataDocumentClient(deps, clientId);
  if (clientId.length > 200) return undefined;
  return cachedClient(deps, clientId, () =>
    deps.db.select().from(oauth2Clients).where(eq(oauth2Clients.clientId, clientId)).get(),
  );
}

/** RFC 6749 §2.3.1: id and secret are form-encoded before they are joined and base64-encoded. */
function fromFormEncoding(value: string): string {
  return decodeURIComponent(value.replace(/\+/g, " "));
}

function basicCredentials(header: string): { clientId: string; secret: string } {
  const invalid = new OAuth2Error("invalid_client", "malformed HTTP Basic credentials");
  let decoded: string;
  try {
    decoded = atob(header.slice(6).trim());
  } catch {
    throw invalid;
  }
  const colon = decoded.indexOf(":");
  if (colon < 0) throw invalid;
  try {
    return {
      clientId: fromFormEncoding(decoded.slice(0, colon)),
      secret: fromFormEncoding(decoded.slice(colon + 1)),
    };
  } catch {
    throw invalid;
  }
}

/**
 * Client authentication at the token, introspection, revocation, device authorization and pushed authorization
 * request endpoints (RFC 6749 §2.3): HTTP Basic, the form's `client_secret`, or a `client_assertion`
 * (`private_key_jwt`, client-assertion.ts), one way only; a public client (`none`) sends only `client_id`. The method
 * must be the one the client was registered with, so a leaked secret of a Basic client cannot be replayed in a form
 * either, and a `private_key_jwt` client authenticates with its key and nothing else. Secrets are compared as SHA-256
 * digests in constant time. `endpoint`: the URL called, which an assertion may name as its audience.
 */
export async function authenticateClient(
  deps: Deps,
  authorization: string | undefined,
  params: Map<string, string>,
  endpoint = deps.config.urls.auth("/oauth2/token"),
): Promise<OAuth2ClientRow> {
  const usesBasic = authorization !== undefined && /^basic /i.test(authorization);
  const formSecret = params.get("client_secret");
  const usesAssertion = params.has("client_assertion") || params.has("client_assertion_type");
  let method: OAuth2ClientRow["tokenEndpointAuthMethod"];
  let clientId: string | undefined;
  let secret: string | undefined;
  if (
    (usesBasic && (formSecret !== undefined || usesAssertion)) ||
    (formSecret !== undefined && usesAssertion)
  ) {
    throw new OAuth2Error(
      "invalid_request",
      "authenticate the client in one way only: HTTP Basic, client_secret or client_assertion",
    );
  }
  if (usesBasic) {
    ({ clientId, secret } = basicCredentials(authorization));
    const formId = params.get("client_id");
    if (formId !== undefined && formId !== clientId) {
      throw new OAuth2Error("invalid_request", "client_id differs from the HTTP Basic credentials");
    }
    method = "client_secret_basic";
  } else if (usesAssertion) {
    clientId = assertedClientId(params);
    method = "private_key_jwt";
  } else {
    clientId = params.get("client_id");
    secret = formSecret;
    method = secret === undefined ? "none" : "client_secret_post";
  }
  const challenge = usesBasic ? 'Basic realm="oauth2"' : undefined;
  if (!clientId) throw new OAuth2Error("invalid_client", "client authentication is required", challenge);
  const client = await findOAuth2Client(deps, clientId);
  if (!client) throw new OAuth2Error("invalid_client", "unknown client", challenge);
  if (client.tokenEndpointAuthMethod !== method) {
    throw new OAuth2Error(
      "invalid_client",
      `this client authenticates with ${client.tokenEndpointAuthMethod}, not ${method}`,
      challenge,
    );
  }
  if (method === "none") return client;
  if (method === "private_key_jwt") {
    await verifyClientAssertion(deps, client, params.get("client_assertion") ?? "", endpoint);
    return client;
  }
  const presented = await sha256Hex(secret ?? "");
  if (!client.secretHash || !timingSafeEqualString(presented, client.secretHash)) {
    throw new OAuth2Error("invalid_client", "wrong client secret", challenge);
  }
  return client;
}
