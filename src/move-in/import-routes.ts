import { Hono } from "hono";
import { auditAdminAction } from "../audit/admin-action";
import { AppError } from "../errors";
import { eventStatements } from "../events/record";
import type { AppEnv } from "../http/app-env";
import { boundedBody } from "../http/body-limit";
import { NO_CONTENT, operation } from "../http/documented";
import { jsonBody, queryParams } from "../http/validation";
import { importBuckets } from "./bucket-import";
import { importFile, planFiles } from "./file-import";
import { ledgerPage } from "./ledger";
import { removeImported } from "./removals";
import { importUsers } from "./user-import";
import {
  completedBody,
  fileImportQuery,
  fileResultSchema,
  importBucketsBody,
  importResultsSchema,
  importUsersBody,
  ledgerPageSchema,
  ledgerQuery,
  planFilesBody,
  removalsBody,
} from "./wire";

/**
 * A batch of 100 users with their tokens is larger than the API's usual 64 KB (src/runtime/app.ts leaves these paths to this
 * limit); the command sends fewer users per call when they carry many tokens.
 */
const IMPORT_BODY_BYTES = 4 * 1024 * 1024;
export const importBody = boundedBody<AppEnv>(
  IMPORT_BODY_BYTES,
  () =>
    new AppError(
      "payload-too-large",
      `an import batch is at most ${IMPORT_BODY_BYTES} bytes: send fewer rows`,
    ),
);

const GUIDE = "The command `npm run admin -- import-nhost` calls it (docs/migrating-from-nhost.md).";

/** The import from Nhost (contract move-in §2), behind the admin secret (mounted by src/runtime/app.ts). */
export const importAdminRoutes = new Hono<AppEnv>()
  .post(
    "/import/nhost/users",
    operation({
      summary: "Import Nhost users",
      description:
        "Up to 100 users, each with its roles, providers, security keys, refresh tokens and PATs (Nhost's hash), " +
        "pending ticket and TOTP secret, written whole or not at all. Per user: `imported`, `updated`, " +
        "`unchanged`, `kept` (changed here since the last run) or `skipped` with the reasons (one an earlier run " +
        "imported from another `system`: skipped). `system` is recorded in the ledger (absent: a user's own " +
        "`system`, else `nhost`; a user naming another than the batch's is skipped). `dryRun` " +
        `checks without writing. ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "One result per user, in order.", schema: importResultsSchema } },
    }),
    importBody,
    jsonBody(importUsersBody),
    async (c) => {
      const { users, dryRun, system } = c.req.valid("json");
      return c.json({ results: await importUsers(c.var.deps, users, dryRun, system) });
    },
  )
  .post(
    "/import/nhost/buckets",
    operation({
      summary: "Import Nhost buckets",
      description: `Up to 100 buckets with their limits; new ones get the default access rules. ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "One result per bucket, in order.", schema: importResultsSchema } },
    }),
    importBody,
    jsonBody(importBucketsBody),
    async (c) => {
      const { buckets, dryRun, system } = c.req.valid("json");
      return c.json({ results: await importBuckets(c.var.deps, buckets, dryRun, system) });
    },
  )
  .post(
    "/import/nhost/files/plan",
    operation({
      summary: "Plan a file import",
      description: `Per Nhost file record: \`unchanged\`, \`needs-bytes\`, \`kept\` or \`skipped\` with the reason. Writes nothing. ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "One result per file, in order.", schema: importResultsSchema } },
    }),
    importBody,
    jsonBody(planFilesBody),
    async (c) => {
      const { files, system } = c.req.valid("json");
      return c.json({ results: await planFiles(c.var.deps, files, system) });
    },
  )
  .put(
    "/import/nhost/files/:id",
    operation({
      summary: "Import a Nhost file",
      description:
        "The bytes in the body, the record (base64url JSON) in `x-import-file`: the bytes go to R2, then the record " +
        `is written with Nhost's id, name, MIME type, ETag, uploader and metadata. 400 when the bytes are not the record's. ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "`imported`, `updated` or `unchanged`.", schema: fileResultSchema } },
    }),
    queryParams(fileImportQuery),
    async (c) =>
      c.json(
        await importFile(
          c.var.deps,
          c.req.param("id"),
          c.req.header("x-import-file"),
          c.req.raw.body,
          c.req.valid("query").system,
        ),
      ),
  )
  .get(
    "/import/nhost/ledger",
    operation({
      summary: "What imports wrote",
      description: `Ids of users, buckets or files imported from \`system\` (default \`nhost\`) in binary order, \`limit\` at a time after \`after\`. ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "A page of ids.", schema: ledgerPageSchema } },
    }),
    queryParams(ledgerQuery),
    async (c) => {
      const { system, kind, after, limit } = c.req.valid("query");
      return c.json(await ledgerPage(c.var.deps.shards, system, kind, after, limit));
    },
  )
  .post(
    "/import/nhost/removals",
    operation({
      summary: "Remove what Nhost deleted",
      description: `Deletes users, buckets or files imported from \`system\` (default \`nhost\`) that it no longer has; ids not imported from it are left (\`absent\`). ${GUIDE}`,
      security: "admin-secret",
      answers: { 200: { description: "`deleted`, `absent` or `kept` per id.", schema: importResultsSchema } },
    }),
    jsonBody(removalsBody),
    async (c) => {
      const { system, kind, ids, dryRun } = c.req.valid("json");
      return c.json({ results: await removeImported(c.var.deps, system, kind, ids, dryRun) });
    },
  )
  .post(
    "/import/nhost/completed",
    operation({
      summary: "Record a finished import",
      description: `Writes one \`admin.import.completed\` event to the audit log and one \`import.completed\` event to the event stream (webhooks; the import itself sends no per-user events), with the run's report. ${GUIDE}`,
      security: "admin-secret",
      answers: { 204: NO_CONTENT() },
    }),
    jsonBody(completedBody),
    async (c) => {
      const { report } = c.req.valid("json");
      await c.var.deps.db.batch(eventStatements(c.var.deps.db, "import.completed", "import", { report }));
      auditAdminAction(c, "import.completed", null, { report });
      return c.body(null, 204);
    },
  );
