// The shape of src/ (README "Layout"), checked by `npm run lint`. Features are folders (auth, oauth2, providers,
// admin, storage) over shared plumbing (http, rate-limits, audit, mail, sms, openapi, db, lib and the top-level
// errors, env and config). `src/index.ts` and `src/app.ts` compose them and may import anything.
const FEATURES = "^src/(auth|oauth2|providers|admin|storage)/";
const PLUMBING = "^src/(http|rate-limits|audit|mail|sms|openapi|db|lib)/|^src/(errors|env|config)\\.ts$";
// Plumbing from the bottom up: a layer imports (at run time) only the layers below it.
const LAYERS = [
  ["^src/(errors|env)\\.ts$", "the error catalog and the Env type depend on nothing of ours"],
  ["^src/lib/", "lib: pure helpers (crypto, keys, passwords, redirects) over errors and the config type"],
  ["^src/db/", "db: the schema, the client and housekeeping, over lib"],
  ["^src/(mail|sms|audit)/", "outbound messages and the audit log, over db and lib"],
  ["^src/rate-limits/", "rate limits: buckets, the RateLimiter object and their middleware"],
  ["^src/config\\.ts$", "config: parses every setting once, with the mail, rate-limit and provider parsers"],
  ["^src/http/", "http: the request context, validation, authentication of requests, shared fields"],
  ["^src/openapi/", "openapi: documents read off the apps' routes"],
];

const layerRules = LAYERS.slice(0, -1).map(([path, reason], index) => ({
  name: `layer-${path.replace(/[^a-z]+/g, "-").replace(/^-|-$/g, "")}`,
  comment: `${reason}: it must not import (at run time) a layer above it`,
  severity: "error",
  from: { path },
  to: {
    path: LAYERS.slice(index + 1)
      .map(([above]) => above)
      .join("|"),
    // Types cost nothing at run time: the request context's type (http/app-env.ts) and the config type are shared.
    dependencyTypesNot: ["type-only"],
  },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "A cycle makes the order of module evaluation matter and the layers meaningless",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "plumbing-imports-no-feature",
      comment: "Shared plumbing serves every feature, so it cannot depend on one",
      severity: "error",
      from: { path: PLUMBING, pathNot: "^src/config\\.ts$" },
      to: { path: `${FEATURES}|^src/(app|index)\\.ts$` },
    },
    {
      name: "config-reads-only-feature-settings",
      comment:
        "config.ts parses each feature's settings with that feature's own parser (its config.ts), nothing else",
      severity: "error",
      from: { path: "^src/config\\.ts$" },
      to: { path: FEATURES, pathNot: "^src/[^/]+/config\\.ts$" },
    },
    {
      name: "feature-uses-public-surface",
      comment:
        "A feature uses another only through its index.ts (core auth: one per sub-feature), so a change inside one starts and ends there",
      severity: "error",
      from: { path: FEATURES },
      to: {
        path: FEATURES,
        pathNot: [
          "^src/$1/",
          "^src/auth/[^/]+/index\\.ts$",
          "^src/(oauth2|providers|admin|storage)/index\\.ts$",
        ],
      },
    },
    ...layerRules,
  ],
  options: {
    // TypeScript 7 has no compiler API yet (dependency-cruiser reads sources through it up to 6): swc parses them.
    parser: "swc",
    tsConfig: { fileName: "tsconfig.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "^src/wasm\\.d\\.ts$" },
  },
};
