// @edge-auth/hono as it is published (packages/hono/package.json): `npm pack` builds `dist/index.js` for Node, Bun
// and Deno, which take the `default` export; Workers take the TypeScript source (the other tests). Threat: a package
// whose published JavaScript differs from what the tests ran, or does not load outside a bundler. Here the built
// file runs in Node, off Cloudflare: a token signed by a key of a JWKS served on loopback passes `requireUser`,
// the same token from another issuer does not.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { Hono } from "hono";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";

const PACKAGE = join(process.cwd(), "packages", "hono");

describe("@edge-auth/hono's published build", () => {
  it("is what `npm pack` ships, and verifies a session token in Node against a JWKS", async () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    expect(manifest.exports["."].default).toBe("./dist/index.js");
    expect(manifest.scripts.prepack).toBe("npm run build");
    expect(manifest.peerDependencies.hono).toBeDefined();
    // The build script of the package, as `npm pack` runs it (esbuild from the repository's devDependencies).
    await promisify(execFile)("npm", ["run", "--silent", "build"], { cwd: PACKAGE });
    const built = (await import(
      pathToFileURL(join(PACKAGE, "dist", "index.js")).href
    )) as typeof import("../../packages/hono/src/index");

    const { publicKey, privateKey } = await generateKeyPair("ES256");
    const jwk = { ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256", use: "sig" };
    const jwks = createServer((_, response) => response.end(JSON.stringify({ keys: [jwk] })));
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const jwksUrl = `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/jwks`;
    const issuer = "https://auth.example.com/auth/v1";
    const token = (iss: string) =>
      new SignJWT({
        sid: "session-1",
        "https://hasura.io/jwt/claims": {
          "x-hasura-user-id": "u1",
          "x-hasura-default-role": "user",
          "x-hasura-allowed-roles": ["user"],
        },
      })
        .setProtectedHeader({ alg: "ES256", kid: "k1", typ: "JWT" })
        .setSubject("u1")
        .setIssuer(iss)
        .setIssuedAt()
        .setExpirationTime("5m")
        .sign(privateKey);
    try {
      const app = new Hono<import("../../packages/hono/src/index").AuthEnv>()
        .use(built.auth({ issuer, jwksUrl }))
        .get("/me", built.requireUser(), (c) => c.json(c.var.identity));
      const ok = await app.request("/me", { headers: { authorization: `Bearer ${await token(issuer)}` } });
      expect(ok.status).toBe(200);
      expect(await ok.json()).toMatchObject({
        source: "token",
        user: { id: "u1", roles: ["user"] },
        face: "nhost",
      });
      const other = await app.request("/me", {
        headers: { authorization: `Bearer ${await token("https://elsewhere.example.com")}` },
      });
      expect(other.status).toBe(401);
    } finally {
      jwks.close();
    }
  });
});
