import type { SsoConnectionRow } from "../../db/schema";
import type { Deps } from "../../http/deps";
import { acsUrl, EMAIL_NAME_ID, POST_BINDING, samlSettingsOf, spEntityId } from "./metadata";
import { escapeXml, NS } from "./xml";

/**
 * The SP-initiated start (SAML profiles §4.1.3–4): an AuthnRequest sent with the HTTP-Redirect binding (bindings
 * §3.4: raw DEFLATE, base64, URL-encoded `SAMLRequest`), unsigned (the metadata says `AuthnRequestsSigned="false"`:
 * this SP has no key pair; the request's ID is what binds the answer, through `InResponseTo`). The IdP answers with
 * the POST binding at the ACS.
 */

/** An `xs:ID` is an NCName: a letter or `_` first. 160 random bits, hex. */
export function newSamlRequestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(20));
  return `_${Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

const NCNAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,255}$/;

async function deflateRawBase64(text: string): Promise<string> {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The IdP's URL carrying an AuthnRequest whose ID is `requestId` (what the sso core stored the pending sign-in
 * under). `requestId` must be an NCName (`newSamlRequestId()` makes one).
 */
export async function samlAuthnRequestUrl(
  deps: Pick<Deps, "config" | "now">,
  connection: Pick<SsoConnectionRow, "id" | "settings">,
  requestId: string,
): Promise<string> {
  if (!NCNAME.test(requestId)) throw new Error("a SAML request ID must be an NCName (newSamlRequestId)");
  const settings = samlSettingsOf(connection.settings);
  const xml =
    `<samlp:AuthnRequest xmlns:samlp="${NS.protocol}" xmlns:saml="${NS.assertion}" ID="${requestId}" ` +
    `Version="2.0" IssueInstant="${new Date(deps.now()).toISOString()}" ` +
    `Destination="${escapeXml(settings.ssoUrl)}" ProtocolBinding="${POST_BINDING}" ` +
    `AssertionConsumerServiceURL="${escapeXml(acsUrl(deps.config, connection.id))}">` +
    `<saml:Issuer>${escapeXml(spEntityId(deps.config, connection.id))}</saml:Issuer>` +
    `<samlp:NameIDPolicy Format="${EMAIL_NAME_ID}" AllowCreate="true"/>` +
    `</samlp:AuthnRequest>`;
  const url = new URL(settings.ssoUrl);
  url.searchParams.set("SAMLRequest", await deflateRawBase64(xml));
  return url.href;
}
