import { describe, expect, it } from "vitest";
import { identityOf } from "../../src/sso/saml/identity";
import {
  decodeSamlResponse,
  type SamlExpectations,
  verifySamlResponse,
} from "../../src/sso/saml/verify-response";
import { XmlRefused } from "../../src/sso/saml/xml";
import { IDP_CERT } from "../fixtures/saml/keys";
import { IDP_ENTITY_ID, type ResponseOptions, signedResponse, toBase64 } from "./saml-support/idp";
import {
  assertionOf,
  DS,
  forgedCopy,
  insertAfterIssuer,
  parseXml,
  responseOf,
  SAML,
  SAMLP,
  serialize,
  setNameId,
  signatureOf,
} from "./saml-support/tamper";

// The verification core of the SAML service provider (src/sso/saml/verify-response.ts), against responses signed by
// a real IdP implementation (samlify) and then tampered with as an attacker holding one valid response would.

const SP = "http://localhost:8787/auth/v1/sso/saml/conn-1/metadata";
const ACS = "http://localhost:8787/auth/v1/sso/saml/conn-1/acs";
const IDP_DER = IDP_CERT.replace(/-----[A-Z ]+-----|\s+/g, "");
const VICTIM = "ceo@acme.test";
const ATTACKER = "mallory@acme.test";

const expectations = (overrides: Partial<SamlExpectations> = {}): SamlExpectations => ({
  idpEntityId: IDP_ENTITY_ID,
  certificates: [IDP_DER],
  spEntityId: SP,
  acsUrl: ACS,
  now: Date.now(),
  ...overrides,
});

const respond = (options: Partial<ResponseOptions> = {}) =>
  signedResponse({ spEntityId: SP, acsUrl: ACS, nameId: ATTACKER, inResponseTo: "_req1", ...options });

const verify = (xml: string, overrides?: Partial<SamlExpectations>) =>
  verifySamlResponse(xml, expectations(overrides));

function refused(xml: string, message: RegExp, overrides?: Partial<SamlExpectations>) {
  expect(() => verify(xml, overrides)).toThrow(message);
}

describe("valid responses", () => {
  it.each(["assertion", "response", "both"] as const)(
    "accepts a response whose %s is signed",
    async (sign) => {
      const xml = await respond({ sign, attributes: { displayName: ["Mallory"], groups: ["eng", "ops"] } });
      const assertion = verify(xml);
      expect(assertion).toMatchObject({ nameId: ATTACKER, inResponseTo: "_req1" });
      expect(identityOf(assertion)).toEqual({
        subject: ATTACKER,
        email: ATTACKER,
        displayName: "Mallory",
        groups: ["eng", "ops"],
      });
    },
  );

  it("accepts a response re-serialized by a DOM (the control for the tampering tests below)", async () => {
    // Every attack below parses and re-serializes the signed XML; this proves that alone breaks nothing, so each
    // refusal comes from the attack.
    for (const sign of ["assertion", "response"] as const) {
      expect(verify(serialize(parseXml(await respond({ sign })))).nameId).toBe(ATTACKER);
    }
  });

  it("reads an IdP-initiated response as answering no request", async () => {
    expect(verify(await respond({ inResponseTo: undefined })).inResponseTo).toBeUndefined();
  });

  it("decodes the POST binding's base64 (with line breaks) and refuses what is not", () => {
    expect(decodeSamlResponse(toBase64("<x>é</x>").replace(/(.{4})/g, "$1\r\n"))).toBe("<x>é</x>");
    expect(() => decodeSamlResponse("%%%")).toThrow(/base64/);
    expect(() => decodeSamlResponse(undefined)).toThrow(/missing/);
  });
});

describe("signature wrapping (XSW 1–8, SAML Raider's catalogue)", () => {
  // XSW1 — response signature: the attacker's copy of the Response becomes the root; the IdP's Signature moves into
  // it and the original Response is put inside that Signature, so the reference (#original) still digests.
  it("refuses XSW1 (forged response root, original response inside the signature)", async () => {
    const doc = parseXml(await respond({ sign: "response" }));
    const original = responseOf(doc);
    const signature = signatureOf(original)!;
    const evil = forgedCopy(original, VICTIM);
    original.removeChild(signature);
    signature.appendChild(original);
    insertAfterIssuer(evil, signature);
    refused(serialize(evil), /share one ID|exactly one assertion|reference exactly the element/);
  });

  // XSW2 — as XSW1 with a detached signature: the original Response is the forged root's child beside the Signature.
  it("refuses XSW2 (forged response root, original response as a sibling of the signature)", async () => {
    const doc = parseXml(await respond({ sign: "response" }));
    const original = responseOf(doc);
    const signature = signatureOf(original)!;
    const evil = forgedCopy(original, VICTIM);
    original.removeChild(signature);
    insertAfterIssuer(evil, signature);
    evil.insertBefore(original, signature);
    refused(serialize(evil), /share one ID|exactly one assertion|reference exactly the element/);
  });

  // XSW3 — assertion signature: a forged Assertion (another ID, no signature) inserted before the signed one, for a
  // processor that reads the first assertion.
  it("refuses XSW3 (forged assertion before the signed one)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    responseOf(doc).insertBefore(forgedCopy(signed, VICTIM), signed);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW4 — the signed Assertion moved inside the forged one.
  it("refuses XSW4 (signed assertion wrapped inside the forged one)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const evil = forgedCopy(signed, VICTIM);
    responseOf(doc).replaceChild(evil, signed);
    evil.appendChild(signed);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW5 — the forged Assertion carries the IdP's Signature; the original (unsigned now) follows at the end.
  it("refuses XSW5 (forged assertion carrying the signature, original appended)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const signature = signatureOf(signed)!;
    const evil = forgedCopy(signed, VICTIM);
    signed.removeChild(signature);
    insertAfterIssuer(evil, signature);
    responseOf(doc).replaceChild(evil, signed);
    responseOf(doc).appendChild(signed);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW6 — the forged Assertion carries the Signature, and the original Assertion is inside that Signature.
  it("refuses XSW6 (original assertion inside the signature of the forged one)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const signature = signatureOf(signed)!;
    const evil = forgedCopy(signed, VICTIM);
    signed.removeChild(signature);
    signature.appendChild(signed);
    insertAfterIssuer(evil, signature);
    responseOf(doc).appendChild(evil);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW7 — the forged Assertion hidden in an Extensions element (schema-legal anywhere), the signed one untouched.
  it("refuses XSW7 (forged assertion inside Extensions)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const extensions = doc.createElementNS(SAMLP, "samlp:Extensions");
    extensions.appendChild(forgedCopy(signed, VICTIM));
    responseOf(doc).insertBefore(extensions, signed);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW8 — the forged Assertion carries the Signature with an Object element holding the original (unsigned now).
  it("refuses XSW8 (original assertion inside a ds:Object of the forged one's signature)", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const signature = signatureOf(signed)!;
    const evil = forgedCopy(signed, VICTIM);
    signed.removeChild(signature);
    const object = doc.createElementNS(DS, "ds:Object");
    object.appendChild(signed);
    signature.appendChild(object);
    insertAfterIssuer(evil, signature);
    responseOf(doc).appendChild(evil);
    refused(serialize(doc), /exactly one assertion/);
  });

  // XSW3 with the forged copy keeping the signed assertion's ID: the reference by ID would have two candidates.
  it("refuses two elements sharing one ID", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    const evil = forgedCopy(signed, VICTIM, signed.getAttribute("ID")!);
    const extensions = doc.createElementNS(SAMLP, "samlp:Extensions");
    extensions.appendChild(evil);
    responseOf(doc).insertBefore(extensions, signed);
    refused(serialize(doc), /share one ID/);
  });

  // The Response's signature must cover the Response itself, not some other element it references.
  it("refuses a response signature that references another element", async () => {
    const doc = parseXml(await respond({ sign: "both" }));
    const reference = signatureOf(responseOf(doc))!.getElementsByTagNameNS(DS, "Reference")[0]!;
    reference.setAttribute("URI", `#${assertionOf(doc).getAttribute("ID")}`);
    refused(serialize(doc), /reference exactly the element|not valid/);
  });
});

describe("content the signature does not vouch for", () => {
  // Comment truncation (Duo Labs 2018, CVE-2017-11428 and siblings): the IdP signed `ceo@acme.test.evil.test`; a
  // comment inserted after `ceo@acme.test` leaves the canonical form (and so the signature) unchanged. A processor
  // reading the first text node would see `ceo@acme.test`. The whole value must come back.
  it("reads the whole NameID when a comment splits it", async () => {
    const xml = await respond({ nameId: "ceo@acme.test.evil.test" });
    const split = xml.replace(">ceo@acme.test.evil.test<", ">ceo@acme.test<!---->.evil.test<");
    expect(split).not.toBe(xml);
    const assertion = verify(split);
    expect(assertion.nameId).toBe("ceo@acme.test.evil.test");
    expect(identityOf(assertion)?.email).toBe("ceo@acme.test.evil.test");
  });

  // An unsigned assertion inside a signed response: the response's signature covers its assertion, so swapping in
  // an assertion of the attacker's making breaks the digest.
  it("refuses an assertion swapped inside a signed response", async () => {
    const doc = parseXml(await respond({ sign: "response" }));
    setNameId(assertionOf(doc), VICTIM);
    refused(serialize(doc), /not valid for the identity provider's certificate/);
  });

  // A signed response and an extra, unsigned assertion beside the signed one.
  it("refuses an unsigned assertion added to a signed response", async () => {
    const doc = parseXml(await respond({ sign: "both" }));
    responseOf(doc).appendChild(forgedCopy(assertionOf(doc), VICTIM));
    refused(serialize(doc), /exactly one assertion/);
  });

  // A response with its signature stripped and its subject changed.
  it("refuses a response where nothing is signed", async () => {
    const doc = parseXml(await respond({ sign: "response" }));
    responseOf(doc).removeChild(signatureOf(responseOf(doc))!);
    setNameId(assertionOf(doc), VICTIM);
    refused(serialize(doc), /neither the response nor the assertion is signed/);
  });

  // A response signed with a key of the attacker's own, whose certificate it carries in KeyInfo: only the
  // certificates of the IdP's metadata count.
  it("refuses a signature by a certificate that is not the IdP's (even one carried in KeyInfo)", async () => {
    const xml = await respond({ key: "other", sign: "both" });
    expect(xml).toContain("X509Certificate");
    refused(xml, /not valid for the identity provider's certificate/);
  });

  // SHA-1 (SHAttered, 2017): a response signed with RSA-SHA1 is refused, even by the IdP's own key.
  it("refuses an RSA-SHA1 signature", async () => {
    const xml = await respond({ algorithm: "http://www.w3.org/2000/09/xmldsig#rsa-sha1" });
    expect(xml).toContain("xmldsig#rsa-sha1");
    refused(xml, /unsupported signature/);
    expect(
      verify(await respond({ algorithm: "http://www.w3.org/2001/04/xmldsig-more#rsa-sha512" })).nameId,
    ).toBe(ATTACKER);
  });

  it("accepts the IdP's second certificate during a rollover", async () => {
    expect(verify(await respond(), { certificates: ["MIIBbogus", IDP_DER] }).nameId).toBe(ATTACKER);
  });

  it("refuses an encrypted assertion (not supported) and an IdP's error status", async () => {
    const doc = parseXml(await respond());
    const signed = assertionOf(doc);
    responseOf(doc).replaceChild(doc.createElementNS(SAML, "saml:EncryptedAssertion"), signed);
    refused(serialize(doc), /encrypted assertions are not supported/);
    const failed = await respond({ statusCode: "urn:oasis:names:tc:SAML:2.0:status:Responder" });
    refused(failed, /did not sign the user in \(urn:oasis:names:tc:SAML:2.0:status:Responder\)/);
  });
});

describe("the assertion's conditions", () => {
  // Audience restriction (SAML core §2.5.1.4): an assertion the IdP issued to another SP (which that SP's operator
  // could replay here) is not for this one.
  it("refuses an assertion for another audience", async () => {
    refused(await respond({ audience: "https://other-sp.example/metadata" }), /another audience/);
  });

  // Recipient (profiles §4.1.4.2): an assertion delivered to another ACS (another connection of this service).
  it("refuses a bearer confirmation for another recipient", async () => {
    refused(await respond({ recipient: ACS.replace("conn-1", "conn-2") }), /another recipient/);
  });

  it("refuses a response for another destination", async () => {
    refused(await respond({ destination: "https://elsewhere.example/acs" }), /another destination/);
  });

  it("refuses an assertion from another issuer", async () => {
    refused(await respond({ issuer: "https://rogue-idp.example" }), /Issuer is not the identity provider/);
  });

  // An expired assertion (captured from a log, a proxy, a browser history): refused past NotOnOrAfter + 60 s skew.
  it("refuses an expired assertion, and accepts one inside the skew", async () => {
    refused(await respond({ notBefore: -10 * 60_000, notOnOrAfter: -2 * 60_000 }), /expired/);
    expect(verify(await respond({ notOnOrAfter: -30_000 })).nameId).toBe(ATTACKER);
  });

  // An assertion not valid yet (issued for later, or an IdP clock far ahead).
  it("refuses an assertion that is not valid yet", async () => {
    refused(await respond({ notBefore: 5 * 60_000, notOnOrAfter: 10 * 60_000 }), /not valid yet/);
  });

  it("refuses InResponseTo claims that differ between the response and its signed assertion", async () => {
    const doc = parseXml(await respond());
    responseOf(doc).setAttribute("InResponseTo", "_another-request");
    refused(serialize(doc), /InResponseTo of the response and of the assertion differ/);
  });

  // An IdP-initiated assertion (no InResponseTo) whose unsigned Response claims an InResponseTo: the claim is not
  // signed, so it must not turn the response into an answer to someone's request.
  it("ignores an InResponseTo that only the unsigned response claims", async () => {
    const doc = parseXml(await respond({ inResponseTo: undefined }));
    responseOf(doc).setAttribute("InResponseTo", "_victims-request");
    refused(serialize(doc), /InResponseTo of the response and of the assertion differ/);
  });
});

describe("hostile documents", () => {
  // XML entity expansion (billion laughs) and external entities (XXE): any DOCTYPE is refused before parsing.
  it("refuses an entity bomb and any DOCTYPE", async () => {
    const bomb =
      '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">' +
      '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol">&c;</samlp:Response>';
    refused(bomb, /DOCTYPE/);
    const xxe = (await respond()).replace(
      "<samlp:Response",
      '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><samlp:Response',
    );
    refused(xxe, /DOCTYPE/);
  });

  // Deep nesting: the canonicalizer recurses per level; the depth is counted on the text before any parser runs.
  it("refuses a deeply nested document", async () => {
    const deep = `${"<a>".repeat(5000)}${"</a>".repeat(5000)}`;
    const xml = (await respond()).replace("</saml:Assertion>", `<x>${deep}</x></saml:Assertion>`);
    refused(xml, /nests deeper than 32/);
  });

  it("refuses a huge document", async () => {
    expect(() => decodeSamlResponse("A".repeat(300 * 1024))).toThrow(/larger than/);
    const huge = (await respond()).replace(
      "</saml:Assertion>",
      `<x>${"A".repeat(300 * 1024)}</x></saml:Assertion>`,
    );
    refused(huge, /larger than/);
  });

  // Whatever an attacker cuts out of a signed response, the answer is a refusal that says why (XmlRefused, a 400 at
  // the ACS), never another exception (a 500).
  it("refuses every truncation and byte flip of a signed response with a reason", async () => {
    const xml = await respond({ sign: "both" });
    let seed = 7;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % below;
    };
    for (let i = 0; i < 120; i++) {
      const at = random(xml.length);
      const mutated =
        i % 2 === 0
          ? xml.slice(0, at) + xml.slice(at + 1 + random(40))
          : xml.slice(0, at) + String.fromCharCode(33 + random(90)) + xml.slice(at + 1);
      if (mutated === xml) continue;
      let outcome: unknown;
      try {
        outcome = verify(mutated);
      } catch (error) {
        outcome = error;
      }
      // A flip inside the base64 of a signature value or a digest can't pass; one in an insignificant spot (an
      // IssueInstant the checks don't read, whitespace) can leave a valid response: both are fine, a crash is not.
      if (!(outcome instanceof XmlRefused))
        expect(outcome, mutated).toMatchObject({ nameId: expect.any(String) });
    }
  }, 60_000);

  it("refuses malformed XML and documents that are not a Response", async () => {
    refused("<samlp:Response", /malformed|no root/);
    refused('<a xmlns="urn:x"/>', /not a SAML Response/);
    refused((await respond()).replace("</samlp:Response>", "</samlp:Response><extra/>"), /malformed/);
  });
});
