import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  claimName,
  claimsQuery,
  customClaimValues,
  encodeClaim,
  valueAt,
} from "../../../src/auth/custom-claims";
import { accessTokenClaims } from "../../../src/auth/token-claims";
import { getConfig } from "../../../src/runtime/config";

/**
 * Nhost's reading of `AUTH_JWT_CUSTOM_CLAIMS`, vector for vector: the data, paths, query texts and values below are
 * those of Nhost Auth's own test (github.com/nhost/hasura-auth, go/controller/custom_claims_test.go), less the
 * JSONPath filter this service refuses at start.
 */
const data = {
  m: {
    k: "v",
    l: ["a", "b", "c"],
    l2: ["a"],
    lm: [{ id: 1 }, { id: 2 }, { id: 3 }],
    ln: [
      [{ id: 1 }, { id: 2 }],
      [{ id: 3 }, { id: 4 }],
    ],
    d: [
      { id: 1, v: "a" },
      { id: 2, v: "b" },
      { id: 3, v: "a" },
    ],
  },
  metadata: { m1: 1 },
};

const NHOST_PATHS = {
  root: "m",
  key: "m.k",
  element: "m.l[2]",
  "array[]": "m.l[]",
  "array[*]": "m.l[*]",
  "array[].ids": "m.lm[].id",
  "array[*].ids": "m.lm[*].id",
  "array.ids[]": "m.lm.id[]",
  "arrayOneElement[]": "m.l2[]",
  "metadata.m1": "metadata.m1",
  nonexistent: "nonexistent.nonexistent",
};

describe("custom claims as Nhost reads them", () => {
  it("builds Nhost's GetClaims query, character for character", () => {
    expect(claimsQuery(NHOST_PATHS)).toBe(
      "query GetClaims($id: uuid!) { user(id:$id) {m{k l l2 lm{id }}metadata nonexistent{nonexistent }} }",
    );
    // Nhost's recipe (docs/recipes/custom-hasura-claims.md) and the contract's example.
    expect(
      claimsQuery({
        "organisation-id": "profile.organisation.id",
        "project-ids": "profile.contributesTo[].project.id",
      }),
    ).toBe(
      "query GetClaims($id: uuid!) { user(id:$id) {profile{contributesTo{project{id }}organisation{id }}} }",
    );
    // `metadata` is a leaf wherever it is (a JSON column), and a selection set wins over a leaf of the same name.
    expect(claimsQuery({ a: "profile.metadata.x.y", b: "profile", c: "profile.level" })).toBe(
      "query GetClaims($id: uuid!) { user(id:$id) {profile{level metadata }} }",
    );
  });

  it("picks each path's value as Nhost does", () => {
    const expected: Record<string, unknown> = {
      root: data.m,
      key: "v",
      element: "c",
      "arrayOneElement[]": ["a"],
      "array[]": ["a", "b", "c"],
      "array[*]": ["a", "b", "c"],
      "array[].ids": [1, 2, 3],
      "array[*].ids": [1, 2, 3],
      "array.ids[]": [1, 2, 3],
      "metadata.m1": 1,
      nonexistent: null,
    };
    for (const [name, path] of Object.entries(NHOST_PATHS)) {
      expect([name, valueAt(data, path)]).toEqual([name, expected[name]]);
    }
    // Kubernetes' JSONPath: nulls and missing keys on the way are skipped; nothing at all is no value.
    const sparse = { p: [{ q: { r: 1 } }, { q: null }, {}, { q: { r: null } }] };
    expect(valueAt(sparse, "p[].q.r")).toEqual([1, null]);
    expect(valueAt({ p: null }, "p.q")).toBeNull();
    expect(valueAt({ p: null }, "p[].q")).toEqual([]);
    expect(valueAt({ p: [] }, "p[].q")).toEqual([]);
    expect(valueAt({ p: "x" }, "p[].q")).toBeNull();
    expect(valueAt({ l: ["a"] }, "l[3]")).toBeNull();
    expect(valueAt(null, "profile.organisation.id")).toBeNull();
  });

  it("takes the defaults where a path yields nothing, Nhost's second vector", () => {
    const defaults = { root: "defaultRoot", nonexistent: "defaultNonExistent" };
    const claims = customClaimValues(NHOST_PATHS, data, defaults);
    expect(claims["x-hasura-nonexistent"]).toBe("defaultNonExistent");
    expect(claims["x-hasura-root"]).not.toBe("defaultRoot");
    // No such user at all (a sign-up the app's database does not have yet): every claim its default, or `null`.
    expect(customClaimValues({ org: "profile.organisation.id", x: "a.b" }, null, { org: [] })).toEqual({
      "x-hasura-org": "{}",
      "x-hasura-x": "null",
    });
  });

  it("encodes values as Nhost's pgEncode: strings as they are, arrays as Postgres array literals", () => {
    expect(encodeClaim("8bdc4f57-7d64-4146-a663-6bcb05ea2ac1")).toBe("8bdc4f57-7d64-4146-a663-6bcb05ea2ac1");
    expect(encodeClaim(["3af1b33f", "979cb94c"])).toBe('{"3af1b33f","979cb94c"}');
    expect(encodeClaim([1, 2])).toBe("{1,2}");
    expect(encodeClaim([])).toBe("{}");
    expect(encodeClaim([true, null])).toBe("{true,null}");
    expect(encodeClaim(3)).toBe("3");
    expect(encodeClaim(1.5)).toBe("1.5");
    expect(encodeClaim(false)).toBe("false");
    expect(encodeClaim(null)).toBe("null");
    expect(encodeClaim(undefined)).toBe("null");
    // Go's encoding/json: keys sorted, HTML characters escaped.
    expect(encodeClaim({ b: 1, a: "<&>" })).toBe('{"a":"\\u003c\\u0026\\u003e","b":1}');
    expect(encodeClaim(['say "hi"'])).toBe('{"say \\"hi\\""}');
  });

  it("names claims x-hasura-<name>, lower-cased, without doubling the prefix", () => {
    expect(claimName("organisation-id")).toBe("x-hasura-organisation-id");
    expect(claimName("Project-IDs")).toBe("x-hasura-project-ids");
    expect(claimName("X-Hasura-Team")).toBe("x-hasura-team");
  });

  it("never lets a custom claim overwrite a built-in one, whatever the custom part holds", async () => {
    // Threat: a value of the app's data (or, later, a hook's answer) in x-hasura-user-id or the roles would let a
    // user act as another or take a role they were never given.
    const config = getConfig(env);
    const user = {
      id: "0b8f6d8e-5f0a-4d7e-9c55-2f5e8a1b6c11",
      createdAt: 0,
      displayName: "ana",
      avatarUrl: "",
      locale: "en",
      email: "ana@example.com",
      emailVerified: true,
      phoneNumber: null,
      phoneNumberVerified: false,
      defaultRole: "user",
      roles: ["user", "me"],
      isAnonymous: false,
      activeMfaType: null,
      metadata: {},
      appMetadata: null,
    };
    const claims = await accessTokenClaims({ config, outbound: fetch }, user, {}, undefined, {
      "x-hasura-user-id": "someone-else",
      "x-hasura-default-role": "admin",
      "x-hasura-allowed-roles": "{admin}",
      "x-hasura-user-is-anonymous": "true",
      "x-hasura-team": "t1",
    });
    expect(claims).toEqual({
      "x-hasura-user-id": user.id,
      "x-hasura-default-role": "user",
      "x-hasura-allowed-roles": ["user", "me"],
      "x-hasura-user-is-anonymous": "false",
      "x-hasura-team": "t1",
    });
  });

  it("refuses at start a claim named as a built-in one (in any case, with or without its prefix) and filters", () => {
    for (const name of ["X-Hasura-User-Id", "x-hasura-default-role", "org-id", "ORG-ROLE", "auth-elevated"]) {
      expect(() => getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ [name]: "id" }) })).toThrow(
        /AUTH_JWT_CUSTOM_CLAIMS: claim names reserved by the service/,
      );
    }
    for (const path of ["m.d[?(@.v == 'a')].id", "a..b", "a b", "1a", "a[-1]", ""]) {
      expect(() => getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ x: path }) })).toThrow(
        /AUTH_JWT_CUSTOM_CLAIMS: unsupported claim name or path/,
      );
    }
    for (const path of ["m.l[2]", "m.lm[*].id", "metadata.some-key.x[]", "profile.metadata.a:b"]) {
      expect(() => getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS: JSON.stringify({ x: path }) })).not.toThrow();
    }
    expect(() => getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: "[1]" })).toThrow(
      /AUTH_JWT_CUSTOM_CLAIMS_DEFAULTS: must be a JSON object/,
    );
    expect(() => getConfig({ ...env, AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR: "ignore" })).toThrow(
      /AUTH_JWT_CUSTOM_CLAIMS_ON_ERROR/,
    );
    expect(() => getConfig({ ...env, HASURA_GRAPHQL_GRAPHQL_URL: "ftp://hasura.example.com" })).toThrow(
      /HASURA_GRAPHQL_GRAPHQL_URL/,
    );
  });
});
