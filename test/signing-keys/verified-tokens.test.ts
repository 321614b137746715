// A token verified a moment ago is not verified again in this isolate (src/signing-keys/verified-tokens.ts). Threats: a
// forged or altered token riding on a genuine one's entry; a token outliving its `exp` or its key through the memory.
import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { getConfig } from "../../src/runtime/config";
import { signAccessToken, verifyAccessToken } from "../../src/signing-keys/jwt";
import { forgetKeySet } from "../../src/signing-keys/keys";

const claims = { "x-hasura-user-id": "u1" };

afterEach(() => {
  vi.restoreAllMocks();
});

describe("verified tokens", () => {
  it("verifies a token's signature once, then answers from memory; forgets on a key change in this isolate", async () => {
    const config = getConfig({ ...env });
    const token = await signAccessToken(config, "u1", claims, Date.now());
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect((await verifyAccessToken(config, token))?.sub).toBe("u1");
    expect((await verifyAccessToken(config, token))?.sub).toBe("u1");
    expect(verify).toHaveBeenCalledTimes(1);
    forgetKeySet(config);
    expect((await verifyAccessToken(config, token))?.sub).toBe("u1");
    expect(verify).toHaveBeenCalledTimes(2);
  });

  it("never lets another token ride on a remembered one", async () => {
    const config = getConfig({ ...env });
    const token = await signAccessToken(config, "u1", claims, Date.now());
    expect(await verifyAccessToken(config, token)).not.toBeNull();
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const otherPayload = btoa(JSON.stringify({ ...JSON.parse(atob(payload)), sub: "u2" }))
      .replace(/=+$/, "")
      .replace(/\+/g, "-")
      .replace(/\//g, "_");
    expect(await verifyAccessToken(config, `${header}.${otherPayload}.${signature}`)).toBeNull();
    expect(await verifyAccessToken(config, `${token}x`)).toBeNull();
  });

  it("does not outlive the token's exp, nor ten seconds", async () => {
    const config = getConfig({ ...env, AUTH_ACCESS_TOKEN_EXPIRES_IN: "61" });
    const token = await signAccessToken(config, "u1", claims, Date.now());
    const verify = vi.spyOn(crypto.subtle, "verify");
    expect(await verifyAccessToken(config, token)).not.toBeNull();
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 62_000);
    expect(await verifyAccessToken(config, token)).toBeNull();

    const longer = getConfig({ ...env });
    const lasting = await signAccessToken(longer, "u1", claims, Date.now());
    expect(await verifyAccessToken(longer, lasting)).not.toBeNull();
    const calls = verify.mock.calls.length;
    vi.setSystemTime(Date.now() + 10_001);
    expect(await verifyAccessToken(longer, lasting)).not.toBeNull();
    expect(verify.mock.calls.length).toBe(calls + 1);
  });

  it("hands out a payload no request can change for the next", async () => {
    const config = getConfig({ ...env });
    const token = await signAccessToken(config, "u1", claims, Date.now());
    await verifyAccessToken(config, token);
    const payload = (await verifyAccessToken(config, token))!;
    expect(Object.isFrozen(payload)).toBe(true);
    expect(Object.isFrozen(payload["https://hasura.io/jwt/claims"])).toBe(true);
  });
});
