import { DOMParser, type Document, type Element, type Node } from "@xmldom/xmldom";

/**
 * Parsing XML that an outside party wrote (a SAML response, an IdP's metadata), with the limits checked on the text
 * BEFORE any parser sees it: a DOCTYPE (and with it every entity: billion laughs, external entities; OWASP XXE
 * Prevention Cheat Sheet) is refused outright, nesting beyond `maxDepth` is refused (the canonicalizer of the
 * signature check recurses per level), and the size is the caller's cap. Any parser error or warning refuses the
 * document too: a lenient parser that repairs input reads something other than what was signed.
 */

export const NS = {
  protocol: "urn:oasis:names:tc:SAML:2.0:protocol",
  assertion: "urn:oasis:names:tc:SAML:2.0:assertion",
  metadata: "urn:oasis:names:tc:SAML:2.0:metadata",
  dsig: "http://www.w3.org/2000/09/xmldsig#",
} as const;

/** A document refused before or while parsing; the message says why, fit to show. */
export class XmlRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "XmlRefused";
  }
}

export interface XmlLimits {
  maxChars: number;
  maxDepth: number;
}

/**
 * The deepest element nesting of `xml`, counted over its tags without parsing (so a hostile depth never reaches a
 * recursive parser). Comments, CDATA and processing instructions are skipped; `>` inside an attribute value is
 * handled by the quote-aware tag pattern.
 */
function nestingDepth(xml: string, limit: number): number {
  const tokens =
    /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<\?[\s\S]*?\?>|<(\/?)[^\s/>!?]+(?:[^>"']|"[^"]*"|'[^']*')*?(\/?)>/g;
  let depth = 0;
  let deepest = 0;
  for (const match of xml.matchAll(tokens)) {
    if (match[1] === undefined) continue; // comment, CDATA, PI
    if (match[1] === "/") depth--;
    else if (match[2] !== "/") {
      depth++;
      if (depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    }
  }
  return deepest;
}

export function parseUntrustedXml(xml: string, limits: XmlLimits): Document {
  if (xml.length > limits.maxChars)
    throw new XmlRefused(`the XML is larger than ${limits.maxChars} characters`);
  // No DOCTYPE at all: SAML never needs one (SAML core §1.3, profiles §3.1 forbid DTDs in protocol messages).
  if (/<!DOCTYPE|<!ENTITY/i.test(xml)) throw new XmlRefused("the XML has a DOCTYPE or entity declarations");
  if (nestingDepth(xml, limits.maxDepth) > limits.maxDepth) {
    throw new XmlRefused(`the XML nests deeper than ${limits.maxDepth} elements`);
  }
  let document: Document;
  try {
    document = new DOMParser({
      onError: (level, message) => {
        throw new XmlRefused(`the XML is malformed (${level}: ${String(message).slice(0, 120)})`);
      },
    }).parseFromString(xml, "text/xml");
  } catch (error) {
    if (error instanceof XmlRefused) throw error;
    const cause = (error as Error)?.message ?? "";
    throw new XmlRefused(`the XML is malformed${cause ? ` (${cause.split("\n")[0]!.slice(0, 120)})` : ""}`);
  }
  if (!document.documentElement) throw new XmlRefused("the XML has no root element");
  return document;
}

const ELEMENT_NODE = 1;
const TEXT_NODE = 3;
const CDATA_SECTION_NODE = 4;

export function isElement(node: Node | null | undefined, ns: string, localName: string): node is Element {
  return (
    !!node &&
    node.nodeType === ELEMENT_NODE &&
    (node as Element).namespaceURI === ns &&
    (node as Element).localName === localName
  );
}

/** The element children of `parent` named `{ns}localName`, in order. */
export function childrenOf(parent: Node, ns: string, localName: string): Element[] {
  const found: Element[] = [];
  for (let node = parent.firstChild; node; node = node.nextSibling) {
    if (isElement(node, ns, localName)) found.push(node);
  }
  return found;
}

/** The one child named so, `undefined` when none; more than one refuses the document (no guessing which counts). */
export function onlyChild(parent: Node, ns: string, localName: string): Element | undefined {
  const found = childrenOf(parent, ns, localName);
  if (found.length > 1) throw new XmlRefused(`more than one ${localName} element`);
  return found[0];
}

/** Every element named `{ns}localName` anywhere under `root` (the root included). */
export function descendantsOf(root: Document | Element, ns: string, localName: string): Element[] {
  return Array.from(root.getElementsByTagNameNS(ns, localName));
}

/**
 * The whole text of an element: every text and CDATA node under it, joined. Reading only the first text node is the
 * bug that let `user@evil.com<!---->.example.com` pass for `user@evil.com` (Duo Labs, 2018, CVE-2017-11427…11430):
 * comments are not part of the signed canonical form, so the IdP signed the whole value and the SP must read it all.
 */
export function textOf(element: Element): string {
  let text = "";
  const walk = (node: Node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === TEXT_NODE || child.nodeType === CDATA_SECTION_NODE)
        text += child.nodeValue ?? "";
      else if (child.nodeType === ELEMENT_NODE) walk(child);
    }
  };
  walk(element);
  return text.trim();
}

/** An attribute's value, `undefined` when absent. */
export function attributeOf(element: Element, name: string): string | undefined {
  return element.hasAttribute(name) ? element.getAttribute(name)! : undefined;
}

/** Escapes text for an attribute value or element content of XML this service writes. */
export function escapeXml(value: string): string {
  return value.replace(/[<>&"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
