import type { Document, Element } from "@xmldom/xmldom";
import { signedContent } from "./signature";
import {
  attributeOf,
  childrenOf,
  descendantsOf,
  isElement,
  NS,
  onlyChild,
  parseUntrustedXml,
  textOf,
  XmlRefused,
} from "./xml";

/**
 * The checks of a SAML 2.0 Web Browser SSO response (SAML profiles §4.1.4.2–3, core §2.5, §3.2.2), on a document
 * parsed under the limits of ./xml.ts. The order is the point:
 * 1. the document's shape: one Response root, exactly one Assertion, its child; no two elements share an ID;
 * 2. a valid signature by the IdP's certificate on the Response or on the Assertion (./signature.ts);
 * 3. everything after is read from the signed bytes re-parsed, never from the received tree, so that no wrapping
 *    (XSW 1–8) can show the checks one element and the sign-in another;
 * 4. Issuer, Audience, Recipient, Destination, the time window (small skew), the bearer confirmation.
 * Every failure is an `XmlRefused` whose message says what was wrong.
 */

export const SAML_LIMITS = {
  /** Of the base64 form field; a real response is a few kilobytes. */
  maxBase64Chars: 256 * 1024,
  /** A SAML response nests about ten levels deep (Response/Assertion/AttributeStatement/Attribute/Value…). */
  maxDepth: 32,
  /** Clock skew between the IdP and this service. */
  skewMs: 60_000,
} as const;

export interface SamlExpectations {
  idpEntityId: string;
  /** base64 DER certificates of the IdP's metadata. */
  certificates: readonly string[];
  spEntityId: string;
  acsUrl: string;
  now: number;
}

export interface SamlAssertion {
  assertionId: string;
  /** The request this answers, from the signed content only; absent: IdP-initiated. */
  inResponseTo?: string;
  /** Until when the assertion could be presented again (its replay entry lives that long). */
  validUntil: number;
  nameId: string;
  nameIdFormat?: string;
  /** Attribute name → values. */
  attributes: Record<string, string[]>;
}

const BEARER = "urn:oasis:names:tc:SAML:2.0:cm:bearer";
const SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success";
const ID_ATTRIBUTES = ["ID", "Id", "id"];

/** The XML of a POST-binding `SAMLResponse` form field (base64 of UTF-8, line breaks allowed). */
export function decodeSamlResponse(field: string | undefined): string {
  if (!field) throw new XmlRefused("SAMLResponse is missing");
  if (field.length > SAML_LIMITS.maxBase64Chars) {
    throw new XmlRefused(`SAMLResponse is larger than ${SAML_LIMITS.maxBase64Chars} characters`);
  }
  try {
    const bytes = Uint8Array.from(atob(field.replace(/\s+/g, "")), (char) => char.charCodeAt(0));
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw new XmlRefused("SAMLResponse is not base64 of UTF-8 text");
  }
}

function parse(xml: string): Document {
  return parseUntrustedXml(xml, { maxChars: SAML_LIMITS.maxBase64Chars, maxDepth: SAML_LIMITS.maxDepth });
}

/** Refuses two elements with one ID anywhere: a reference by ID would otherwise have two candidates (XSW). */
function requireUniqueIds(document: Document) {
  const seen = new Set<string>();
  for (const element of Array.from(document.getElementsByTagName("*"))) {
    for (const name of ID_ATTRIBUTES) {
      const id = attributeOf(element, name);
      if (id === undefined) continue;
      if (seen.has(id)) throw new XmlRefused("two elements share one ID (signature wrapping)");
      seen.add(id);
    }
  }
}

const idOf = (element: Element, what: string) => {
  const id = attributeOf(element, "ID");
  if (!id) throw new XmlRefused(`the ${what} has no ID`);
  return id;
};

function requireSuccess(response: Element) {
  const status = onlyChild(response, NS.protocol, "Status");
  const code = status && onlyChild(status, NS.protocol, "StatusCode");
  const value = code && attributeOf(code, "Value");
  if (value !== SUCCESS) {
    const inner = code && onlyChild(code, NS.protocol, "StatusCode");
    const detail = [value, inner && attributeOf(inner, "Value")].filter(Boolean).join(" / ");
    throw new XmlRefused(`the identity provider did not sign the user in (${detail || "no status"})`);
  }
}

/** Parses signed canonical XML and returns its root, which must be `{ns}localName`. */
function signedRoot(xml: string, ns: string, localName: string): Element {
  const root = parse(xml).documentElement;
  if (!isElement(root, ns, localName)) throw new XmlRefused(`the signed element is not a ${localName}`);
  return root;
}

/**
 * The assertion to read, from signed bytes only: the Assertion's own signature, else the Response's (which covers
 * its one Assertion). Also the signed Response, when it is signed.
 */
function trustedParts(xml: string, document: Document, expect: SamlExpectations) {
  const response = document.documentElement!;
  if (!isElement(response, NS.protocol, "Response"))
    throw new XmlRefused("the document is not a SAML Response");
  requireUniqueIds(document);
  if (descendantsOf(document, NS.assertion, "EncryptedAssertion").length > 0) {
    throw new XmlRefused("encrypted assertions are not supported: configure the IdP to sign, not encrypt");
  }
  const assertions = descendantsOf(document, NS.assertion, "Assertion");
  if (assertions.length !== 1) throw new XmlRefused("the response must carry exactly one assertion");
  const assertion = assertions[0]!;
  if (assertion.parentNode !== response)
    throw new XmlRefused("the assertion must be a child of the response");
  requireSuccess(response);

  const responseSignature = onlyChild(response, NS.dsig, "Signature");
  const assertionSignature = onlyChild(assertion, NS.dsig, "Signature");
  if (!responseSignature && !assertionSignature) {
    throw new XmlRefused("neither the response nor the assertion is signed");
  }
  const signedResponse = responseSignature
    ? signedRoot(
        signedContent(xml, responseSignature, idOf(response, "response"), expect.certificates),
        NS.protocol,
        "Response",
      )
    : undefined;
  const signedAssertion = assertionSignature
    ? signedRoot(
        signedContent(xml, assertionSignature, idOf(assertion, "assertion"), expect.certificates),
        NS.assertion,
        "Assertion",
      )
    : undefined;
  const trustedAssertion = signedAssertion ?? childrenOf(signedResponse!, NS.assertion, "Assertion")[0];
  if (!trustedAssertion || childrenOf(signedResponse ?? response, NS.assertion, "Assertion").length !== 1) {
    throw new XmlRefused("the response must carry exactly one assertion");
  }
  return { received: response, signedResponse, assertion: trustedAssertion };
}

const instant = (element: Element, name: string): number | undefined => {
  const value = attributeOf(element, name);
  if (value === undefined) return undefined;
  const time = Date.parse(value);
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(value) || Number.isNaN(time)) {
    throw new XmlRefused(`${name} is not a UTC date-time`);
  }
  return time;
};

/** NotBefore ≤ now < NotOnOrAfter, each with the skew (SAML core §2.5.1.2). */
function requireWindow(element: Element, now: number, what: string) {
  const notBefore = instant(element, "NotBefore");
  const notOnOrAfter = instant(element, "NotOnOrAfter");
  if (notBefore !== undefined && now + SAML_LIMITS.skewMs < notBefore) {
    throw new XmlRefused(`the ${what} is not valid yet (NotBefore)`);
  }
  if (notOnOrAfter !== undefined && now - SAML_LIMITS.skewMs >= notOnOrAfter) {
    throw new XmlRefused(`the ${what} has expired (NotOnOrAfter)`);
  }
  return notOnOrAfter;
}

/** Conditions: the time window and every AudienceRestriction naming this SP (core §2.5.1.4). */
function requireConditions(assertion: Element, expect: SamlExpectations): number | undefined {
  const conditions = onlyChild(assertion, NS.assertion, "Conditions");
  if (!conditions) throw new XmlRefused("the assertion has no Conditions");
  const notOnOrAfter = requireWindow(conditions, expect.now, "assertion");
  const restrictions = childrenOf(conditions, NS.assertion, "AudienceRestriction");
  if (restrictions.length === 0) throw new XmlRefused("the assertion has no AudienceRestriction");
  for (const restriction of restrictions) {
    const audiences = childrenOf(restriction, NS.assertion, "Audience").map(textOf);
    if (!audiences.includes(expect.spEntityId)) {
      throw new XmlRefused("the assertion is for another audience (Audience is not this service provider)");
    }
  }
  return notOnOrAfter;
}

/**
 * The bearer SubjectConfirmation (profiles §4.1.4.2): its Recipient is this ACS, its window is open. Returns its
 * `InResponseTo` and `NotOnOrAfter`.
 */
function requireBearer(subject: Element, expect: SamlExpectations) {
  const bearers = childrenOf(subject, NS.assertion, "SubjectConfirmation").filter(
    (confirmation) => attributeOf(confirmation, "Method") === BEARER,
  );
  if (bearers.length !== 1)
    throw new XmlRefused("the subject must have exactly one bearer SubjectConfirmation");
  const data = onlyChild(bearers[0]!, NS.assertion, "SubjectConfirmationData");
  if (!data) throw new XmlRefused("the bearer SubjectConfirmation has no SubjectConfirmationData");
  if (attributeOf(data, "Recipient") !== expect.acsUrl) {
    throw new XmlRefused("the assertion is for another recipient (Recipient is not this ACS)");
  }
  const notOnOrAfter = requireWindow(data, expect.now, "subject confirmation");
  if (notOnOrAfter === undefined) throw new XmlRefused("the SubjectConfirmationData has no NotOnOrAfter");
  return { inResponseTo: attributeOf(data, "InResponseTo"), notOnOrAfter };
}

/** The request answered, read from signed content; an unsigned Response's own claim must agree or be absent. */
function answeredRequest(
  received: Element,
  signedResponse: Element | undefined,
  confirmed: string | undefined,
) {
  const signedClaim = confirmed ?? (signedResponse && attributeOf(signedResponse, "InResponseTo"));
  const responseClaim = attributeOf(signedResponse ?? received, "InResponseTo");
  if (responseClaim !== undefined && responseClaim !== signedClaim) {
    throw new XmlRefused("InResponseTo of the response and of the assertion differ");
  }
  return signedClaim;
}

function attributesOf(assertion: Element): Record<string, string[]> {
  const attributes: Record<string, string[]> = {};
  for (const statement of childrenOf(assertion, NS.assertion, "AttributeStatement")) {
    for (const attribute of childrenOf(statement, NS.assertion, "Attribute")) {
      const name = attributeOf(attribute, "Name");
      if (!name) continue;
      const values = childrenOf(attribute, NS.assertion, "AttributeValue").map(textOf);
      attributes[name] = [...(attributes[name] ?? []), ...values];
    }
  }
  return attributes;
}

/** Verifies a decoded SAML response; see the file's comment for what and in which order. */
export function verifySamlResponse(xml: string, expect: SamlExpectations): SamlAssertion {
  const document = parse(xml);
  const { received, signedResponse, assertion } = trustedParts(xml, document, expect);
  if (attributeOf(assertion, "Version") !== "2.0") throw new XmlRefused("the assertion is not SAML 2.0");
  const issuer = onlyChild(assertion, NS.assertion, "Issuer");
  if (!issuer || textOf(issuer) !== expect.idpEntityId) {
    throw new XmlRefused("the assertion's Issuer is not the identity provider of this connection");
  }
  const responseIssuer = onlyChild(signedResponse ?? received, NS.assertion, "Issuer");
  if (responseIssuer && textOf(responseIssuer) !== expect.idpEntityId) {
    throw new XmlRefused("the response's Issuer is not the identity provider of this connection");
  }
  const destination = attributeOf(signedResponse ?? received, "Destination");
  if (destination !== undefined && destination !== expect.acsUrl) {
    throw new XmlRefused("the response is for another destination (Destination is not this ACS)");
  }
  const subject = onlyChild(assertion, NS.assertion, "Subject");
  const nameIdElement = subject && onlyChild(subject, NS.assertion, "NameID");
  const nameId = nameIdElement && textOf(nameIdElement);
  if (!subject || !nameIdElement || !nameId) throw new XmlRefused("the assertion names no subject (NameID)");
  const confirmation = requireBearer(subject, expect);
  const conditionsEnd = requireConditions(assertion, expect);
  return {
    assertionId: idOf(assertion, "assertion"),
    inResponseTo: answeredRequest(received, signedResponse, confirmation.inResponseTo),
    validUntil: Math.max(confirmation.notOnOrAfter, conditionsEnd ?? 0) + SAML_LIMITS.skewMs,
    nameId,
    nameIdFormat: attributeOf(nameIdElement, "Format"),
    attributes: attributesOf(assertion),
  };
}
