// The shape of src/ (README "Layout"), checked by `npm run lint`. Features are folders (auth, oauth2, providers,
// admin, storage, …: THE list is src/runtime/features.ts, read here through scripts/features.cjs) over shared
// plumbing (http, rate-limits, audit, hooks, mail, sms, openapi, token-families, db, lib, replay, signing-keys,
// browser and the top-level errors, env and config). `src/index.ts` and src/runtime/ (which mounts the features'
// routes and runs their consumers and housekeeping) compose them and may import anything.
const { featureFolders } = require("./scripts/features.cjs");

const FEATURE_NAMES = featureFolders().join("|");
const FEATURES = `^src/(${FEATURE_NAMES})/`;
const PLUMBING =
  "^src/(http|rate-limits|audit|hooks|events|mail|sms|openapi|token-families|db|lib|replay|signing-keys|browser|settings)/|^src/(errors|env|config)\\.ts$";
// Folders whose sub-folders meet only through each other's index.ts: every feature, and token-families (its legacy
// drawer). A file at a folder's root is that folder's core, which its sub-folders share freely.
const FOLDERS_WITH_SUBFOLDERS = `^src/(${FEATURE_NAMES}|token-families)/`;
// Plumbing from the bottom up: a layer imports (at run time) only the layers below it.
const LAYERS = [
  ["^src/(errors|env)\\.ts$", "the error catalog and the Env type depend on nothing of ours"],
  [
    "^src/browser/text/",
    "the language catalogues: every word shown or mailed, one folder per language, over nothing of ours but types",
  ],
  [
    "^src/lib/",
    "lib: pure helpers (crypto, key formats, passwords, redirects) over errors and the config type",
  ],
  [
    "^src/replay/",
    "replay: what is accepted once (the JtiLedger object, the DPoP proof check that records its jti), over lib",
  ],
  ["^src/hooks/", "hooks: the app's signed synchronous hooks (contract move-in §5.3), over lib"],
  ["^src/db/", "db: the schema, the client and housekeeping, over lib"],
  [
    "^src/signing-keys/",
    "signing keys: the key set (configured, and rotated in through the admin API into D1), signing and verifying JWTs, over lib",
  ],
  [
    "^src/token-families/",
    "token families: refresh-token rotation for sessions and OAuth2 grants, over db and lib",
  ],
  [
    "^src/(mail|sms|audit|events)/",
    "outbound messages, the audit log and the event stream's outbox and queues, over db and lib",
  ],
  ["^src/rate-limits/", "rate limits: buckets, the RateLimiter object and their middleware"],
  [
    "^src/settings/",
    "settings: the pieces of a settings slice and the core's own groups (tokens, transports, Turnstile)",
  ],
  [
    "^src/config\\.ts$",
    "config: the core settings, and the parse of every feature's slice the runtime hands it",
  ],
  ["^src/http/", "http: the request context, validation, authentication of requests, shared fields"],
  [
    "^src/browser/(?!text/)",
    "the person's browser at the IdP: its session cookie, step-up, the page shell and its paths, over http",
  ],
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
      from: { path: PLUMBING },
      to: { path: `${FEATURES}|^src/index\\.ts$|^src/runtime/` },
    },
    {
      name: "features-do-not-import-the-runtime",
      comment:
        "The runtime reads the features (src/runtime/features.ts); a feature that imported it back, even a type, would run a dependency back up",
      severity: "error",
      from: { path: FEATURES },
      to: { path: "^src/runtime/" },
    },
    {
      name: "feature-uses-public-surface",
      comment:
        "A feature uses another only through its index.ts, so a change inside one starts and ends there",
      severity: "error",
      from: { path: FEATURES },
      to: {
        path: FEATURES,
        pathNot: ["^src/$1/", `^src/(${FEATURE_NAMES})/index\\.ts$`],
      },
    },
    {
      name: "sub-folders-meet-through-their-index",
      comment:
        "A sub-folder uses another sub-folder of the same folder only through that one's index.ts (what it offers the others); the files at the folder's root are the core they share",
      severity: "error",
      from: { path: `${FOLDERS_WITH_SUBFOLDERS}([^/]+)/` },
      to: {
        path: "^src/$1/[^/]+/",
        pathNot: ["^src/$1/$2/", "^src/$1/[^/]+/index\\.ts$"],
      },
    },
    {
      name: "auth-core-below-its-sub-folders",
      comment:
        "The files at src/auth/'s root are the core its sub-folders share (users, new users, sessions, completing a sign-in): they never import a sub-folder, only index.ts and core-routes.ts compose them",
      severity: "error",
      from: { path: "^src/auth/[^/]+\\.ts$", pathNot: "^src/auth/(index|core-routes)\\.ts$" },
      to: { path: "^src/auth/[^/]+/" },
    },
    {
      name: "plumbing-uses-token-families-surface",
      comment:
        "Refresh-token rotation is used through its index.ts; the legacy drawer through legacy/index.ts, so it can go in one move (docs/operations.md)",
      severity: "error",
      from: { pathNot: "^src/token-families/" },
      to: {
        path: "^src/token-families/",
        pathNot: ["^src/token-families/index\\.ts$", "^src/token-families/legacy/index\\.ts$"],
      },
    },
    {
      name: "nothing-depends-on-the-legacy-drawer",
      comment:
        "Token families never use their legacy drawer: deleting src/token-families/legacy/ leaves them whole",
      severity: "error",
      from: { path: "^src/token-families/(?!legacy/)" },
      to: { path: "^src/token-families/legacy/" },
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
