import * as samlify from "samlify";
import { IDP_CERT, IDP_KEY, OTHER_CERT, OTHER_KEY } from "../../fixtures/saml/keys";

/**
 * A real SAML identity provider for the tests: samlify (a maintained SAML 2.0 implementation) signs every response
 * with xml-crypto under a committed test key (test/fixtures/saml/keys.ts). The tests choose what the IdP asserts (the
 * subject, audience, recipient, time window, InResponseTo) through samlify's own template mechanism, and which part
 * it signs; the attacks then tamper with the signed XML.
 */

export const IDP_ENTITY_ID = "https://idp.example.test/metadata";
export const IDP_SSO_URL = "https://idp.example.test/sso";

// samlify checks what it *receives* against the SAML XSDs; as an IdP here it only signs, so no validator is needed.
samlify.setSchemaValidator({ validate: async () => "not used: the IdP only signs" });

const binding = samlify.Constants.namespace.binding;

function idpOf(key: "idp" | "other", algorithm = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256") {
  return samlify.IdentityProvider({
    requestSignatureAlgorithm: algorithm,
    entityID: IDP_ENTITY_ID,
    signingCert: key === "idp" ? IDP_CERT : OTHER_CERT,
    privateKey: key === "idp" ? IDP_KEY : OTHER_KEY,
    isAssertionEncrypted: false,
    singleSignOnService: [
      { Binding: binding.redirect, Location: IDP_SSO_URL },
      { Binding: binding.post, Location: IDP_SSO_URL },
    ],
    singleLogoutService: [{ Binding: binding.redirect, Location: `${IDP_SSO_URL}/logout` }],
  });
}

/** The IdP's metadata, as an administrator would download it (signing certificate, SSO endpoints). */
export function idpMetadataXml(): string {
  return idpOf("idp").getMetadata();
}

export interface ResponseOptions {
  spEntityId: string;
  acsUrl: string;
  nameId: string;
  nameIdFormat?: string;
  /** The request answered; omitted: an IdP-initiated response. */
  inResponseTo?: string;
  audience?: string;
  recipient?: string;
  destination?: string;
  issuer?: string;
  /** Milliseconds from now; defaults -1 s and +5 min. */
  notBefore?: number;
  notOnOrAfter?: number;
  /** Which part samlify signs. */
  sign?: "assertion" | "response" | "both";
  /** `other`: a key whose certificate is not in the IdP's metadata. */
  key?: "idp" | "other";
  attributes?: Record<string, string[]>;
  statusCode?: string;
  /** The signature algorithm's URI; RSA-SHA256 by default. */
  algorithm?: string;
  /** The assertion's ID; a fresh one by default (an IdP that reuses one is what the replay check must refuse). */
  assertionId?: string;
}

const xmlText = (value: string) => value.replace(/[<>&"]/g, (char) => `&#${char.charCodeAt(0)};`);

function attributeStatement(attributes: Record<string, string[]>): string {
  const entries = Object.entries(attributes);
  if (entries.length === 0) return "";
  const items = entries
    .map(
      ([name, values]) =>
        `<saml:Attribute Name="${xmlText(name)}">${values
          .map((value) => `<saml:AttributeValue xsi:type="xs:string">${xmlText(value)}</saml:AttributeValue>`)
          .join("")}</saml:Attribute>`,
    )
    .join("");
  return `<saml:AttributeStatement>${items}</saml:AttributeStatement>`;
}

/** A response signed by samlify as the options say; the decoded XML. */
export async function signedResponse(options: ResponseOptions): Promise<string> {
  const sign = options.sign ?? "assertion";
  const sp = samlify.ServiceProvider({
    entityID: options.spEntityId,
    assertionConsumerService: [{ Binding: binding.post, Location: options.acsUrl }],
    wantAssertionsSigned: sign !== "response",
    wantMessageSigned: sign !== "assertion",
  });
  const now = Date.now();
  const at = (offset: number) => new Date(now + offset).toISOString();
  const id = `_${crypto.randomUUID()}`;
  const inResponseTo = options.inResponseTo ? ` InResponseTo="${xmlText(options.inResponseTo)}"` : "";
  const issuer = xmlText(options.issuer ?? IDP_ENTITY_ID);
  const notBefore = at(options.notBefore ?? -1000);
  const notOnOrAfter = at(options.notOnOrAfter ?? 5 * 60_000);
  const xml =
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="${id}" Version="2.0" IssueInstant="${at(0)}" Destination="${xmlText(options.destination ?? options.acsUrl)}"${inResponseTo}>` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="${options.statusCode ?? "urn:oasis:names:tc:SAML:2.0:status:Success"}"/></samlp:Status>` +
    `<saml:Assertion xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xs="http://www.w3.org/2001/XMLSchema" ` +
    `ID="${xmlText(options.assertionId ?? `_a${crypto.randomUUID()}`)}" Version="2.0" IssueInstant="${at(0)}">` +
    `<saml:Issuer>${issuer}</saml:Issuer>` +
    `<saml:Subject><saml:NameID Format="${options.nameIdFormat ?? "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"}">${xmlText(options.nameId)}</saml:NameID>` +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${xmlText(options.recipient ?? options.acsUrl)}"${inResponseTo}/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}">` +
    `<saml:AudienceRestriction><saml:Audience>${xmlText(options.audience ?? options.spEntityId)}</saml:Audience></saml:AudienceRestriction>` +
    `</saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${at(0)}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>` +
    attributeStatement(options.attributes ?? {}) +
    `</saml:Assertion></samlp:Response>`;
  const answer = await idpOf(options.key ?? "idp", options.algorithm).createLoginResponse(
    sp,
    // The request answered is in the template itself (InResponseTo above), not taken from samlify's parse of one.
    { extract: {} },
    "post",
    {},
    {
      customTagReplacement: () => ({ id, context: xml }),
    },
  );
  return new TextDecoder().decode(Uint8Array.from(atob(answer.context), (char) => char.charCodeAt(0)));
}

/** base64 of UTF-8, as the POST binding carries it. */
export function toBase64(xml: string): string {
  let binary = "";
  for (const byte of new TextEncoder().encode(xml)) binary += String.fromCharCode(byte);
  return btoa(binary);
}
