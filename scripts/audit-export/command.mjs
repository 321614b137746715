// `npm run admin -- audit export --since … --format jsonl|ocsf`: the audit log, paged through GET /admin/audit, as
// JSON lines, one event a line: the admin API's events (`jsonl`), or OCSF 1.2.0 Authentication and Account Change
// events (`ocsf`, ocsf.mjs). To stdout, or to --out. Newest first, as the API pages; a line per event, so a SIEM's
// file reader or `jq -s 'sort_by(.time)'` takes it as it is.
import { createWriteStream } from "node:fs";
import { ocsfEventOf } from "./ocsf.mjs";

const FORMATS = ["jsonl", "ocsf"];
const ACTORS = ["user", "admin", "impersonator", "worker", "scim", "system"];
/** The largest page the admin API gives (contract §10). */
const PAGE = 500;

export const EXPORT_USAGE =
  "audit export --since <time> [--until <time>] [--format jsonl|ocsf] [--actor <a>] [--type <t>] [--user <id>] [--out <file>]\n\n" +
  "  --since, --until  ISO 8601 (2026-11-01, 2026-11-01T09:00:00Z): since inclusive, until exclusive\n" +
  "  --format          jsonl (default): the admin API's events; ocsf: OCSF 1.2.0 Authentication (3002) and\n" +
  "                    Account Change (3001) events (events of other types are counted on stderr, not written)\n" +
  `  --actor           one of ${ACTORS.join(", ")}\n` +
  "  --out             a file to write (default: stdout)";

const isMoment = (value) =>
  /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(value);

/** `audit`: a page of the log as a table (or --json); `audit export`: every page, as JSON lines. */
export const auditCommand = {
  summary: "the audit log, newest first; `audit export` writes it as JSON lines or OCSF",
  usage: `audit [--user <id>] [--type <type>] [--actor <a>] [--since <t>] [--until <t>] [--limit <n>]\n${EXPORT_USAGE}`,
  // `audit export …`; `audit` alone lists.
  optionalArgument: "export",
  options: {
    user: { type: "string" },
    type: { type: "string" },
    actor: { type: "string" },
    since: { type: "string" },
    until: { type: "string" },
    limit: { type: "string" },
    format: { type: "string" },
    out: { type: "string" },
  },
  async run(cli, values, argument) {
    if (argument === "export") return exportAudit(cli, values);
    if (argument !== undefined) cli.usageError(`takes no argument ${argument} (did you mean export?)`);
    const { user: userId, type, actor, since, until, limit } = values;
    const page = await cli.call("GET", `/audit?${searchOf({ userId, type, actor, since, until, limit })}`);
    cli.show(page, () =>
      cli.table(
        page.items.map((event) => ({
          ...event,
          actor: [event.actor?.type, event.actor?.name].filter(Boolean).join(": "),
        })),
        ["at", "type", "actor", "userId", "outcome", "ip"],
      ),
    );
  },
};

const searchOf = (params) =>
  new URLSearchParams(Object.entries(params).filter(([, value]) => value !== undefined));

async function exportAudit(cli, values) {
  if (!values.since) cli.usageError("export needs --since (ISO 8601, e.g. 2026-11-01)");
  for (const flag of ["since", "until"]) {
    if (values[flag] !== undefined && !isMoment(values[flag]))
      cli.usageError(`--${flag} ${values[flag]} is not ISO 8601 (2026-11-01 or 2026-11-01T09:00:00Z)`);
  }
  const format = values.format ?? "jsonl";
  if (!FORMATS.includes(format)) cli.usageError(`--format must be one of ${FORMATS.join(", ")}`);
  if (values.actor !== undefined && !ACTORS.includes(values.actor))
    cli.usageError(`--actor must be one of ${ACTORS.join(", ")}`);
  const out = values.out ? createWriteStream(values.out) : process.stdout;
  const write = (line) =>
    new Promise((resolve, reject) =>
      out.write(`${line}\n`) ? resolve() : out.once("drain", resolve).once("error", reject),
    );
  const product = { name: "edge-auth", url: cli.server };
  let cursor;
  let written = 0;
  let other = 0;
  do {
    const page = await cli.call(
      "GET",
      `/audit?${searchOf({
        since: values.since,
        until: values.until,
        actor: values.actor,
        type: values.type,
        userId: values.user,
        limit: String(PAGE),
        cursor,
      })}`,
    );
    for (const event of page.items) {
      const line = format === "ocsf" ? ocsfEventOf(event, product) : event;
      if (!line) {
        other++;
        continue;
      }
      await write(JSON.stringify(line));
      written++;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  if (values.out) await new Promise((resolve) => out.end(resolve));
  console.error(
    `${written} event${written === 1 ? "" : "s"} written` +
      (other
        ? `; ${other} of types outside OCSF's Authentication and Account Change not written (--format jsonl has them)`
        : ""),
  );
}
