import { base64url } from "jose";

/** 256 random bits, base64url: states, nonces and one-time ids. */
export const randomToken = (): string => base64url.encode(crypto.getRandomValues(new Uint8Array(32)));
