import type { Element } from "@xmldom/xmldom";
import { SignedXml } from "xml-crypto";
import { XmlRefused } from "./xml";

/**
 * One XML signature checked with xml-crypto against the IdP's certificates from its metadata, and nothing else: the
 * certificate a response carries in its own `KeyInfo` is ignored (anyone can sign with a certificate of their own
 * making and attach it; xml-crypto would otherwise prefer it). What comes back is the canonical XML the signature's
 * one reference covers (`getSignedReferences`), which the caller parses again and reads instead of the received
 * document: only bytes that were digested are ever read, which is what defeats signature wrapping (XSW; Somorovsky
 * et al., "On Breaking SAML", USENIX Security 2012).
 */

const SIGNATURE_ALGORITHMS = [
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512",
] as const;
const DIGEST_ALGORITHMS = [
  "http://www.w3.org/2001/04/xmlenc#sha256",
  "http://www.w3.org/2001/04/xmlenc#sha512",
] as const;

/** base64 DER (as metadata carries it) → PEM, as node:crypto reads it. */
export function certificatePem(der: string): string {
  const lines = der.replace(/\s+/g, "").match(/.{1,64}/g) ?? [];
  return `-----BEGIN CERTIFICATE-----\n${lines.join("\n")}\n-----END CERTIFICATE-----\n`;
}

/** Keeps only the named entries of one of xml-crypto's algorithm tables (no SHA-1, no HMAC: key confusion). */
function only<T extends Record<string, unknown>>(table: T, names: readonly string[]): T {
  return Object.fromEntries(Object.entries(table).filter(([name]) => names.includes(name))) as T;
}

/**
 * The canonical XML that `signature` covers, when it is valid under one of `certificates` and its only reference is
 * `#<expectedId>` (the element the signature is enveloped in). An invalid signature throws `XmlRefused`.
 */
export function signedContent(
  xml: string,
  signature: Element,
  expectedId: string,
  certificates: readonly string[],
): string {
  let lastProblem = "no certificate of the identity provider";
  for (const certificate of certificates) {
    const check = new SignedXml({ publicCert: certificatePem(certificate), getCertFromKeyInfo: () => null });
    check.SignatureAlgorithms = only(check.SignatureAlgorithms, SIGNATURE_ALGORITHMS);
    check.HashAlgorithms = only(check.HashAlgorithms, DIGEST_ALGORITHMS);
    try {
      // xml-crypto types its own copy of xmldom's Node; the structure is the same.
      check.loadSignature(signature as unknown as Parameters<SignedXml["loadSignature"]>[0]);
      const references = check.getReferences();
      if (references.length !== 1 || references[0]!.uri !== `#${expectedId}`) {
        throw new XmlRefused("the signature must reference exactly the element it is in");
      }
      if (!check.checkSignature(xml)) {
        lastProblem = "the signed content was changed";
        continue;
      }
      const signed = check.getSignedReferences();
      if (signed.length !== 1) throw new XmlRefused("the signature must cover exactly one element");
      return signed[0]!;
    } catch (error) {
      if (error instanceof XmlRefused) throw error;
      const message = (error as Error)?.message ?? "";
      if (/not supported/.test(message))
        throw new XmlRefused(`unsupported signature: ${message.slice(0, 160)}`);
      if (/multiple elements with the same value/.test(message)) {
        throw new XmlRefused("two elements share one ID (signature wrapping)");
      }
      lastProblem = /digest/.test(message)
        ? "the signed content was changed"
        : "the signature value is wrong";
    }
  }
  throw new XmlRefused(`the signature is not valid for the identity provider's certificate (${lastProblem})`);
}
