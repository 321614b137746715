// A software WebAuthn authenticator for the tests: real key pairs (ES256 or RS256), real attestation objects
// ("none" or "packed" self attestation) and real signed assertions, byte for byte as WebAuthn §6 lays them out, so the
// service's verification (SimpleWebAuthn) runs for real. It keeps its credentials, and their signature counters, like
// a security key does.
import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from "@simplewebauthn/server";
import { isoBase64URL, isoCBOR } from "@simplewebauthn/server/helpers";

export type Algorithm = "ES256" | "RS256";
export type AttestationFormat = "none" | "packed";

interface StoredCredential {
  id: Uint8Array;
  alg: Algorithm;
  privateKey: CryptoKey;
  userHandle: string;
  counter: number;
}

const COSE_ALG: Record<Algorithm, number> = { ES256: -7, RS256: -257 };
/** WebAuthn §6.1 flags: user present, user verified, backup eligible, backed up, attested credential data. */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 };

const sha256 = async (data: Uint8Array) =>
  new Uint8Array(await crypto.subtle.digest("SHA-256", new Uint8Array(data)));
const utf8 = (text: string) => new TextEncoder().encode(text);
const b64u = (bytes: Uint8Array) => isoBase64URL.fromBuffer(new Uint8Array(bytes));

function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

function uint32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out;
}

/** WebCrypto's ECDSA signature is r‖s; WebAuthn wants it DER-encoded (WebAuthn §6.5.5). */
function derSignature(raw: Uint8Array): Uint8Array {
  const integer = (bytes: Uint8Array) => {
    let i = 0;
    while (i < bytes.length - 1 && bytes[i] === 0) i++;
    let value = bytes.slice(i);
    if (value[0]! & 0x80) value = concat(new Uint8Array([0]), value);
    return concat(new Uint8Array([0x02, value.length]), value);
  };
  const body = concat(integer(raw.slice(0, 32)), integer(raw.slice(32)));
  return concat(new Uint8Array([0x30, body.length]), body);
}

async function generateKeyPair(alg: Algorithm): Promise<CryptoKeyPair> {
  const params =
    alg === "ES256"
      ? { name: "ECDSA", namedCurve: "P-256" }
      : {
          name: "RSASSA-PKCS1-v1_5",
          modulusLength: 2048,
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: "SHA-256",
        };
  return (await crypto.subtle.generateKey(params, true, ["sign", "verify"])) as CryptoKeyPair;
}

/** The public key as a COSE_Key map (RFC 9053 §7.1 for EC2, RFC 8230 §4 for RSA). */
async function coseKey(alg: Algorithm, publicKey: CryptoKey): Promise<Uint8Array> {
  const jwk = (await crypto.subtle.exportKey("jwk", publicKey)) as JsonWebKey;
  const bytes = (value: string | undefined) => isoBase64URL.toBuffer(value!);
  const map =
    alg === "ES256"
      ? new Map<number, number | Uint8Array>([
          [1, 2],
          [3, COSE_ALG.ES256],
          [-1, 1],
          [-2, bytes(jwk.x)],
          [-3, bytes(jwk.y)],
        ])
      : new Map<number, number | Uint8Array>([
          [1, 3],
          [3, COSE_ALG.RS256],
          [-1, bytes(jwk.n)],
          [-2, bytes(jwk.e)],
        ]);
  return isoCBOR.encode(map);
}

async function sign(credential: StoredCredential, data: Uint8Array): Promise<Uint8Array> {
  if (credential.alg === "ES256") {
    const raw = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, credential.privateKey, data);
    return derSignature(new Uint8Array(raw));
  }
  return new Uint8Array(await crypto.subtle.sign("RSASSA-PKCS1-v1_5", credential.privateKey, data));
}

/** The PublicKeyCredential as the browser's `toJSON()` gives it (WebAuthn §5.1). */
function asJson<R>(credential: StoredCredential, response: R) {
  return {
    id: b64u(credential.id),
    rawId: b64u(credential.id),
    type: "public-key" as const,
    response,
    clientExtensionResults: {},
  };
}

export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];

  constructor(
    readonly origin: string,
    readonly rpId: string,
  ) {}

  private clientData(type: string, challenge: string, origin: string): Uint8Array {
    return utf8(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }

  /** navigator.credentials.create() */
  async create(
    options: PublicKeyCredentialCreationOptionsJSON,
    {
      alg = "ES256",
      attestation = "none",
      origin = this.origin,
      id = crypto.getRandomValues(new Uint8Array(32)),
      flags = FLAGS.UP | FLAGS.UV,
    }: {
      alg?: Algorithm;
      attestation?: AttestationFormat;
      origin?: string;
      /** A credential id of the caller's choosing (one already registered, to see it refused). */
      id?: Uint8Array;
      /**
       * The UP and UV bits (WebAuthn §6.1): a conditional create (an upgrade) may send neither, as a password
       * manager making a passkey without a gesture does.
       */
      flags?: number;
    } = {},
  ): Promise<RegistrationResponseJSON> {
    const keys = await generateKeyPair(alg);
    const credential: StoredCredential = {
      id,
      alg,
      privateKey: keys.privateKey,
      userHandle: options.user.id,
      counter: 0,
    };
    this.credentials.push(credential);
    const clientDataJSON = this.clientData("webauthn.create", options.challenge, origin);
    const authData = concat(
      await sha256(utf8(options.rp.id ?? this.rpId)),
      new Uint8Array([flags | FLAGS.AT]),
      uint32(credential.counter),
      new Uint8Array(16), // AAGUID: none
      new Uint8Array([0, credential.id.length]),
      credential.id,
      await coseKey(alg, keys.publicKey),
    );
    const attStmt =
      attestation === "packed"
        ? new Map<string, number | Uint8Array>([
            ["alg", COSE_ALG[alg]],
            ["sig", await sign(credential, concat(authData, await sha256(clientDataJSON)))],
          ])
        : new Map();
    const attestationObject = isoCBOR.encode(
      new Map<string, string | Uint8Array | Map<string, number | Uint8Array>>([
        ["fmt", attestation],
        ["attStmt", attStmt],
        ["authData", authData],
      ]),
    );
    return asJson(credential, {
      clientDataJSON: b64u(clientDataJSON),
      attestationObject: b64u(attestationObject),
      transports: ["usb"],
    });
  }

  /** navigator.credentials.get(): an allowed credential, or (empty allow list) the newest discoverable one. */
  async get(
    options: PublicKeyCredentialRequestOptionsJSON,
    {
      credential: chosen,
      origin = this.origin,
      userVerified = true,
      flags = userVerified ? FLAGS.UP | FLAGS.UV : FLAGS.UP,
    }: {
      credential?: StoredCredential;
      origin?: string;
      /** False: an authenticator that proves presence only (no PIN, no biometric): the UV flag is not set. */
      userVerified?: boolean;
      /** The authenticator data's flags exactly (user presence, user verification), when a test sets them itself. */
      flags?: number;
    } = {},
  ): Promise<AuthenticationResponseJSON> {
    const allowed = (options.allowCredentials ?? []).map((d) => d.id);
    const credential =
      chosen ??
      [...this.credentials].reverse().find((c) => allowed.length === 0 || allowed.includes(b64u(c.id)));
    if (!credential) throw new Error("the authenticator has no allowed credential");
    credential.counter += 1;
    const clientDataJSON = this.clientData("webauthn.get", options.challenge, origin);
    const authenticatorData = concat(
      await sha256(utf8(options.rpId ?? this.rpId)),
      new Uint8Array([flags]),
      uint32(credential.counter),
    );
    const signature = await sign(credential, concat(authenticatorData, await sha256(clientDataJSON)));
    return asJson(credential, {
      clientDataJSON: b64u(clientDataJSON),
      authenticatorData: b64u(authenticatorData),
      signature: b64u(signature),
      userHandle: credential.userHandle,
    });
  }
}
