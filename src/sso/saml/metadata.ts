import type { Element } from "@xmldom/xmldom";
import { z } from "zod";
import type { Config } from "../../config";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { fetchOutbound, OutboundFetchError, OutboundUrlRefused } from "../../lib/outbound-fetch";
import { outboundPolicy } from "../../lib/outbound-url";
import {
  attributeOf,
  childrenOf,
  escapeXml,
  isElement,
  NS,
  parseUntrustedXml,
  textOf,
  XmlRefused,
} from "./xml";

/**
 * The IdP side of a SAML connection, read from its metadata (SAML metadata §2.4.3 IDPSSODescriptor) into
 * `sso_connections.settings`, and the SP side this service publishes for the IdP's administrator.
 */

export const REDIRECT_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-Redirect";
export const POST_BINDING = "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST";
export const EMAIL_NAME_ID = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";

/** What `sso_connections.settings` holds for `type = "saml"`. */
export const samlSettingsSchema = z.object({
  idpEntityId: z.string().min(1),
  /** The IdP's SingleSignOnService for the HTTP-Redirect binding, where AuthnRequests go. */
  ssoUrl: z.string().min(1),
  /** base64 DER X.509 certificates the IdP signs with (several during a rollover). */
  certificates: z.array(z.string().min(1)).min(1),
  /** Where the metadata came from, when it was fetched (for a later refresh). */
  metadataUrl: z.string().optional(),
});

export type SamlSettings = z.infer<typeof samlSettingsSchema>;

const METADATA_LIMITS = { maxChars: 512 * 1024, maxDepth: 32 };
const FETCH_LIMITS = {
  timeoutMs: 5000,
  maxBytes: METADATA_LIMITS.maxChars,
  accept: "application/samlmetadata+xml, application/xml, text/xml",
  mediaType: (type: string) => /^(application|text)\/([a-z0-9.+-]+\+)?xml$/.test(type),
};

const invalid = (message: string) => new AppError("invalid-request", `SAML metadata: ${message}`);

/** The SP's entity ID: the URL of its metadata, as is customary (SAML metadata §4.1 well-known location). */
export const spEntityId = (config: Pick<Config, "urls">, connectionId: string) =>
  config.urls.auth(`/sso/saml/${encodeURIComponent(connectionId)}/metadata`);

export const acsUrl = (config: Pick<Config, "urls">, connectionId: string) =>
  config.urls.auth(`/sso/saml/${encodeURIComponent(connectionId)}/acs`);

async function fetchMetadata(deps: Deps, url: string): Promise<string> {
  try {
    return (await fetchOutbound(deps.outbound, url, outboundPolicy(deps.config), FETCH_LIMITS)).text;
  } catch (error) {
    if (error instanceof OutboundUrlRefused) throw invalid(error.message);
    if (error instanceof OutboundFetchError) {
      // One answer whatever the cause (contract auth.md §1): the cause would map what answers behind this service.
      throw new AppError(
        "invalid-request",
        `SAML metadata: the metadataUrl could not be fetched (it must answer 200 with XML of at most ` +
          `${FETCH_LIMITS.maxBytes / 1024} KiB, without redirects, within ${FETCH_LIMITS.timeoutMs / 1000} seconds)`,
        `SAML metadata ${url.slice(0, 300)}: ${error.reason}`,
      );
    }
    throw error;
  }
}

/** The one EntityDescriptor with an IDPSSODescriptor (an aggregate of several IdPs is refused: which one?). */
function idpDescriptorOf(root: Element): { entity: Element; idp: Element } {
  const entities = isElement(root, NS.metadata, "EntityDescriptor")
    ? [root]
    : isElement(root, NS.metadata, "EntitiesDescriptor")
      ? childrenOf(root, NS.metadata, "EntityDescriptor")
      : [];
  const idps = entities.flatMap((entity) =>
    childrenOf(entity, NS.metadata, "IDPSSODescriptor").map((idp) => ({ entity, idp })),
  );
  if (idps.length !== 1) throw invalid("the metadata must describe exactly one identity provider");
  return idps[0]!;
}

/** Signing certificates: KeyDescriptors with `use="signing"` or no `use` (metadata §2.4.1.1). */
function certificatesOf(idp: Element): string[] {
  const certificates: string[] = [];
  for (const key of childrenOf(idp, NS.metadata, "KeyDescriptor")) {
    const use = attributeOf(key, "use");
    if (use !== undefined && use !== "signing") continue;
    for (const keyInfo of childrenOf(key, NS.dsig, "KeyInfo")) {
      for (const data of childrenOf(keyInfo, NS.dsig, "X509Data")) {
        for (const cert of childrenOf(data, NS.dsig, "X509Certificate")) {
          const der = textOf(cert).replace(/\s+/g, "");
          if (!/^[A-Za-z0-9+/]+={0,2}$/.test(der) || der.length < 200) {
            throw invalid("an X509Certificate is not a base64 certificate");
          }
          if (!certificates.includes(der)) certificates.push(der);
        }
      }
    }
  }
  if (certificates.length === 0) throw invalid("the identity provider has no signing certificate");
  return certificates.slice(0, 5);
}

/** Settings from IdP metadata given as text or fetched from a URL (outbound-URL policy); bad metadata → 400. */
export async function samlSettingsFromMetadata(
  deps: Deps,
  source: { metadataXml?: string; metadataUrl?: string },
): Promise<SamlSettings> {
  if (!source.metadataXml === !source.metadataUrl) throw invalid("give either metadataXml or metadataUrl");
  const xml = source.metadataXml ?? (await fetchMetadata(deps, source.metadataUrl!));
  let root: Element;
  try {
    root = parseUntrustedXml(xml, METADATA_LIMITS).documentElement!;
  } catch (error) {
    if (error instanceof XmlRefused) throw invalid(error.message);
    throw error;
  }
  const { entity, idp } = idpDescriptorOf(root);
  const idpEntityId = attributeOf(entity, "entityID");
  if (!idpEntityId || idpEntityId.length > 1024) throw invalid("the EntityDescriptor has no entityID");
  const redirect = childrenOf(idp, NS.metadata, "SingleSignOnService").find(
    (service) => attributeOf(service, "Binding") === REDIRECT_BINDING,
  );
  const ssoUrl = redirect && attributeOf(redirect, "Location");
  if (!ssoUrl || !URL.canParse(ssoUrl) || !/^https?:$/.test(new URL(ssoUrl).protocol)) {
    throw invalid("the identity provider has no SingleSignOnService for the HTTP-Redirect binding");
  }
  return {
    idpEntityId,
    ssoUrl,
    certificates: certificatesOf(idp),
    ...(source.metadataUrl ? { metadataUrl: source.metadataUrl } : {}),
  };
}

/** The settings stored on a connection, or a 400 when they are not SAML settings. */
export function samlSettingsOf(settings: unknown): SamlSettings {
  const parsed = samlSettingsSchema.safeParse(settings);
  if (!parsed.success) throw new AppError("invalid-request", "this connection has no SAML settings");
  return parsed.data;
}

/** This service's SP metadata for one connection: what the IdP's administrator imports. */
export function spMetadataXml(config: Pick<Config, "urls">, connectionId: string): string {
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<md:EntityDescriptor xmlns:md="${NS.metadata}" entityID="${escapeXml(spEntityId(config, connectionId))}">`,
    `  <md:SPSSODescriptor AuthnRequestsSigned="false" WantAssertionsSigned="true" protocolSupportEnumeration="${NS.protocol}">`,
    `    <md:NameIDFormat>${EMAIL_NAME_ID}</md:NameIDFormat>`,
    `    <md:AssertionConsumerService Binding="${POST_BINDING}" Location="${escapeXml(acsUrl(config, connectionId))}" index="0" isDefault="true"/>`,
    `  </md:SPSSODescriptor>`,
    `</md:EntityDescriptor>`,
    "",
  ].join("\n");
}
