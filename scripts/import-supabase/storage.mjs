// The storage reader of `import-supabase` (contract supabase.md §5): Supabase Storage's `storage.buckets` and
// `storage.objects`, and the objects' bytes, carried with the Nhost import's machinery (scripts/import-nhost/files.mjs:
// the plan, the streamed upload with its size and ETag checks, the ledger, delta runs and tombstones). An object keeps
// its id as its file id (the Nhost API serves it at /storage/v1/files/{id}) and its bucket and name as its path (the
// Supabase face serves it at /storage/v1/object/{bucket}/{name}).
//
// Bytes come from Storage's file backend (`--files-dir`: FILE_STORAGE_BACKEND_PATH, or a copy of the S3 bucket: both
// keep an object at `<tenant>/<bucket>/<name>/<version>`, or `<tenant>/<bucket>/<name>` before versions) or from the
// old Storage API (`--files-from`: `GET <url>/object/authenticated/<bucket>/<name>` with the service key).

import { createReadStream } from "node:fs";
import { opendir, stat } from "node:fs/promises";
import { join, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { countOutcome } from "../import/outcomes.mjs";
import { carryBytes, wouldNeedBytes } from "../import-nhost/command.mjs";
import { eachLimited, httpSource } from "../import-nhost/files.mjs";
import { countGone, emptiedInNhost, MASS_REMOVAL, removeGone } from "../import-nhost/removals.mjs";
import { iso } from "../import-nhost/user-bundles.mjs";

const UPLOADS_AT_ONCE = 4;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BUCKET_COLUMNS = [
  "id",
  "name",
  "public",
  "file_size_limit",
  "allowed_mime_types",
  "created_at",
  "updated_at",
];
// `owner` (uuid) until Storage's migration 0018 added `owner_id` (text); `user_metadata` since 0025, `version` 0016.
const OBJECT_COLUMNS = [
  "id",
  "bucket_id",
  "name",
  "owner",
  "owner_id",
  "metadata",
  "user_metadata",
  "version",
  "archived_at",
  "is_delete_marker",
  "created_at",
  "updated_at",
];
/** Storage keeps `<name>-$v-<version>` beside `<name>/<version>` when TUS_USE_FILE_VERSION_SEPARATOR is on. */
const VERSION_SEPARATOR = "-$v-";
const EPOCH = new Date(0);

/** The byte source the flags name (null: none), checked before Supabase is read. `usageError` exits. */
export async function storageSource(cli, values) {
  const dir = values["files-dir"];
  const from = values["files-from"];
  if (values["supabase-service-key"] !== undefined)
    cli.usageError(
      "takes no --supabase-service-key: npm prints the command line, secret included. Set SUPABASE_SERVICE_KEY in the environment",
    );
  if (dir && from) cli.usageError("takes --files-dir or --files-from, not both");
  if (dir) {
    const found = await stat(dir).catch(() => null);
    if (!found?.isDirectory()) cli.usageError(`--files-dir ${dir} is not a directory`);
    return fileBackendSource(dir);
  }
  if (from) {
    if (!/^https?:\/\/[^/]/.test(from)) cli.usageError("--files-from must be the old Storage's http(s) URL");
    const key = process.env.SUPABASE_SERVICE_KEY;
    if (!key) cli.usageError("--files-from needs SUPABASE_SERVICE_KEY (the old project's service role key)");
    return storageApi(from, key);
  }
  return null;
}

/** A name that stays inside its bucket's folder: no empty, `.` or `..` segment, no NUL, not absolute. */
const safeName = (name) =>
  typeof name === "string" &&
  !name.includes("\0") &&
  name.split("/").every((s) => s && s !== "." && s !== "..");

/**
 * Storage's file backend under DIR: the tenant's folder is DIR's child (`DIR/<tenant>/<bucket>/…`) or, given
 * FILE_STORAGE_BACKEND_PATH itself, its grandchild (`DIR/<global bucket>/<tenant>/<bucket>/…`). The tenant folders
 * are listed once; each object is looked for in each.
 */
export function fileBackendSource(dir) {
  const root = resolve(dir);
  let tenants = null;
  const folders = async (path) => {
    const names = [];
    for await (const entry of await opendir(path))
      if (entry.isDirectory()) names.push(join(path, entry.name));
    return names.sort();
  };
  const tenantFolders = () => {
    tenants ??= (async () => {
      const first = await folders(root);
      return [...first, ...(await Promise.all(first.map(folders))).flat()];
    })();
    return tenants;
  };
  async function locate(record) {
    if (!safeName(record.bucketId) || !safeName(record.path)) return null;
    const version = record.version;
    for (const tenant of await tenantFolders()) {
      const object = join(tenant, record.bucketId, record.path);
      const candidates = version
        ? [join(object, version), `${object}${VERSION_SEPARATOR}${version}`]
        : [object];
      for (const path of candidates) {
        if (!path.startsWith(root + sep)) continue;
        const found = await stat(path).catch(() => null);
        if (found?.isFile()) return { path, size: found.size };
      }
    }
    return null;
  }
  return {
    describe: `--files-dir ${dir}`,
    find: (_id, record) => locate(record),
    async open(_id, record) {
      const found = await locate(record);
      return (
        found && {
          size: found.size,
          body: () => Readable.toWeb(createReadStream(found.path)),
          cancel: () => {},
        }
      );
    },
  };
}

/** The old Storage API: an object's bytes whatever its bucket's policies, as the service role reads them. */
export function storageApi(base, serviceKey) {
  const root = base.replace(/\/$/, "");
  return httpSource({
    describe: `--files-from ${root}`,
    urlOf: (_id, record) =>
      `${root}/object/authenticated/${encodeURIComponent(record.bucketId)}/${record.path
        .split("/")
        .map(encodeURIComponent)
        .join("/")}`,
    headers: { apikey: serviceKey, authorization: `Bearer ${serviceKey}` },
    refusedHint: " (is SUPABASE_SERVICE_KEY the old project's service role key?)",
    // Storage has long answered a missing object with HTTP 400 and `"statusCode":"404"` in its body.
    missing: (status, text) => status === 400 && /"statusCode"\s*:\s*"404"/.test(text),
  });
}

export function supabaseBucketRecord(row) {
  return {
    id: row.id,
    // Storage has no download expiry of its own (signed URLs name theirs): the service's default.
    downloadExpiration: 30,
    minUploadFileSize: 0,
    maxUploadFileSize: row.file_size_limit === null ? null : Number(row.file_size_limit),
    cacheControl: null,
    presignedUrlsEnabled: true,
    public: row.public === true,
    allowedMimeTypes: row.allowed_mime_types ?? null,
    createdAt: iso(row.created_at ?? EPOCH),
    updatedAt: iso(row.updated_at ?? row.created_at ?? EPOCH),
  };
}

/**
 * A storage.objects row as the wire's FileRecord, with its bucket and name as the path; `version` stays on the CLI's
 * side (where its bytes are), the service drops it. Null, with the reason, when the row has no bytes to carry.
 */
export function supabaseObjectRecord(row) {
  // Object versioning (Storage 0062): only the live version of a name is the object.
  if (row.archived_at || row.is_delete_marker === true)
    return { leftOut: "an archived version or a delete marker, not the object itself" };
  const meta = row.metadata ?? {};
  const size = meta.size ?? meta.contentLength;
  if (size === undefined || size === null)
    return { reason: "no size in metadata (an upload Storage never finished)" };
  const owner = row.owner_id ?? row.owner ?? null;
  return {
    record: {
      id: row.id,
      bucketId: row.bucket_id,
      name: row.name.slice(row.name.lastIndexOf("/") + 1),
      path: row.name,
      size: Number(size),
      mimeType: meta.mimetype ?? null,
      etag: meta.eTag ?? null,
      isUploaded: true,
      // Storage's owner is the uploader's `sub`; anything but a user's uuid (a service role's upload) is nobody.
      uploadedByUserId: owner && UUID.test(String(owner)) ? String(owner).toLowerCase() : null,
      metadata: row.user_metadata ?? null,
      createdAt: iso(row.created_at ?? EPOCH),
      updatedAt: iso(row.updated_at ?? row.created_at ?? EPOCH),
      version: row.version ?? null,
    },
  };
}

/** The storage reader: removals, buckets (with their policies listed), then objects and their bytes. */
export async function storage(run) {
  const { supabase } = run;
  if (!supabase.has("storage.buckets") || !supabase.has("storage.objects")) return;
  await storageRemovals(run);
  const newBuckets = new Set();
  await buckets(run, newBuckets);
  await policies(run);
  await objects(run, newBuckets);
}

/** Objects, then buckets, imported before and gone from Supabase, behind import-nhost's guards. */
async function storageRemovals({ api, supabase, report, progress, dryRun, allowMassRemoval }) {
  const passes = [
    ["file", "storage.objects", () => supabase.ids("storage.objects")],
    ["bucket", "storage.buckets", () => supabase.ids("storage.buckets", { text: true })],
  ];
  for (const [kind, table, ids] of passes) {
    if (await emptiedInNhost(api, ids(), kind))
      throw new Error(
        `${table}: empty in Supabase, but earlier runs imported rows: no file or bucket was removed. Is ` +
          "--database-url the project imported before?",
      );
    if (!allowMassRemoval) {
      const { gone, total } = await countGone(api, ids(), kind);
      if (gone > MASS_REMOVAL && gone * 2 > total)
        throw new Error(
          `${gone} of ${total} imported rows of ${table} are not in this database: no file or bucket was removed. ` +
            "If they really were deleted in Supabase, run again with --allow-mass-removal.",
        );
    }
  }
  for (const [kind, table, ids] of passes) {
    await removeGone({ api, nhostIds: ids(), kind, table, dryRun, report, progress });
    const { deleted, kept } = report.counts(table);
    if (deleted || kept) progress.done(`${table} (removals)`, report.counts(table));
  }
}

async function buckets(run, newBuckets) {
  const { supabase, report, progress } = run;
  const counts = report.counts("storage.buckets");
  const columns = supabase.select("storage.buckets", BUCKET_COLUMNS);
  for await (const page of supabase.pages("storage.buckets", columns, { text: true })) {
    counts.read += page.length;
    const results = await run.send("/buckets", "buckets", page.map(supabaseBucketRecord), {
      dryRun: run.dryRun,
    });
    for (const result of results) {
      countOutcome(report, "storage.buckets", result);
      if (run.dryRun && result.outcome === "imported") newBuckets.add(result.id);
    }
    progress.update("storage.buckets", counts);
  }
  progress.done("storage.buckets", counts);
}

/**
 * The RLS policies on storage.objects, per bucket they name (`bucket_id = '…'`), as report lines: Supabase's access
 * rules live in SQL that this service does not run, so each bucket starts closed (or public-read) and the operator
 * sets its rules from these (docs/migrating-from-supabase.md).
 */
async function policies({ supabase, report }) {
  const rows = await supabase.query(
    `SELECT policyname, cmd, roles::text AS roles, qual, with_check FROM pg_policies
     WHERE schemaname = 'storage' AND tablename = 'objects' ORDER BY policyname`,
  );
  for (const row of rows) {
    const text = `${row.qual ?? ""} ${row.with_check ?? ""}`;
    const named = [...text.matchAll(/bucket_id\s*=\s*'([^']+)'/g)].map((m) => m[1]);
    const where = named.length > 0 ? `bucket ${[...new Set(named)].join(", ")}` : "every bucket";
    const using = row.qual ? ` USING (${row.qual})` : "";
    const check = row.with_check ? ` WITH CHECK (${row.with_check})` : "";
    report.leftOut(
      "storage.policies",
      `${where}: policy "${row.policyname}" FOR ${row.cmd} TO ${row.roles}${using}${check}: set the bucket's rules here`,
    );
  }
}

async function objects(run, newBuckets) {
  const { api, supabase, report, progress, dryRun, files } = run;
  const counts = report.counts("storage.objects");
  const show = () => progress.update("storage.objects", counts, { bytes: report.bytes });
  for await (const page of supabase.pages(
    "storage.objects",
    supabase.select("storage.objects", OBJECT_COLUMNS),
  )) {
    counts.read += page.length;
    const records = [];
    for (const row of page) {
      const { record, reason, leftOut } = supabaseObjectRecord(row);
      if (record) records.push(record);
      else if (leftOut) {
        counts.leftOut++;
        report.leftOut("storage.objects", leftOut);
      } else {
        counts.skipped++;
        report.notCarried("storage.objects", row.id, reason);
      }
    }
    if (records.length === 0) continue;
    const results = await run.send(
      "/files/plan",
      "files",
      records.map(({ version, ...record }) => record),
    );
    const needBytes = [];
    results.forEach((result, i) => {
      const record = records[i];
      if (result.outcome === "needs-bytes" || wouldNeedBytes(result, record, newBuckets))
        needBytes.push(record);
      else countOutcome(report, "storage.objects", result);
    });
    await eachLimited(needBytes, UPLOADS_AT_ONCE, async (record) => {
      const outcome = await carryBytes(api, record, files, dryRun);
      if (outcome.notCarried) {
        counts.skipped++;
        report.notCarried("storage.objects", record.id, outcome.notCarried);
      } else {
        counts[outcome.outcome === "updated" ? "updated" : "imported"]++;
        report.bytes += record.size;
      }
      show();
    });
    show();
  }
  progress.done("storage.objects", counts, { bytes: report.bytes });
}
