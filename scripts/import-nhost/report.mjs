// What the command tells: progress on stderr while it runs, and at the end a report per table on stdout (or one JSON
// object with --json). The exit code follows from the report: 0 when every row was imported, unchanged or knowingly
// left out (expired tokens, rows kept here, files never uploaded), 1 when anything was not carried.

/** The counts of one table, in the report's column order. */
export const COLUMNS = ["read", "imported", "updated", "unchanged", "kept", "skipped", "leftOut", "deleted"];
const HEADINGS = {
  read: "read",
  imported: "imported",
  updated: "updated",
  unchanged: "unchanged",
  kept: "kept",
  skipped: "skipped",
  leftOut: "left out",
  deleted: "deleted",
};
/** The order tables are shown in (others follow in the order they were first counted). */
const TABLES = [
  "storage.buckets",
  "auth.users",
  "auth.user_roles",
  "auth.user_providers",
  "auth.user_security_keys",
  "auth.refresh_tokens",
  "storage.files",
];
/** Not-carried rows listed one by one; beyond that they are only counted (memory stays flat). */
const MAX_LISTED = 10_000;

/** The wire names tables as Nhost's schema-qualified names; accept bare names too. */
export function tableName(table) {
  if (!table || table.includes(".")) return table ?? "?";
  return ["buckets", "files"].includes(table) ? `storage.${table}` : `auth.${table}`;
}

export const formatBytes = (n) =>
  n < 1024
    ? `${n} B`
    : n < 1024 ** 2
      ? `${(n / 1024).toFixed(1)} KiB`
      : n < 1024 ** 3
        ? `${(n / 1024 ** 2).toFixed(1)} MiB`
        : `${(n / 1024 ** 3).toFixed(2)} GiB`;

export class Report {
  constructor({ dryRun = false, server = null, system = "Nhost" } = {}) {
    this.dryRun = dryRun;
    /** The system moved from, as the last line names it. */
    this.system = system;
    this.server = server;
    this.tables = new Map(TABLES.map((table) => [table, emptyCounts()]));
    /** "table id" → {table, id, reason}: rows not carried, merged per row. */
    this.notCarriedRows = new Map();
    this.notCarriedOverflow = 0;
    /** "table reason" → {table, reason, count}: rows knowingly left out, summarised. */
    this.leftOutReasons = new Map();
    /** Run-level problems that are not one row (a refused removal pass). */
    this.problems = [];
    this.bytes = 0;
  }

  counts(table) {
    const name = tableName(table);
    if (!this.tables.has(name)) this.tables.set(name, emptyCounts());
    return this.tables.get(name);
  }

  add(table, column, n = 1) {
    if (n) this.counts(table)[column] += n;
  }

  /** A row that was not carried: listed with its reason, and the run exits 1. */
  notCarried(table, id, reason) {
    const key = `${tableName(table)} ${id}`;
    const known = this.notCarriedRows.get(key);
    if (known) {
      if (!known.reason.includes(reason)) known.reason += `; ${reason}`;
    } else if (this.notCarriedRows.size < MAX_LISTED) {
      this.notCarriedRows.set(key, { table: tableName(table), id, reason });
    } else this.notCarriedOverflow++;
  }

  /** Rows knowingly left out (not an error): counted per table and reason. */
  leftOut(table, reason, n = 1) {
    if (!n) return;
    const key = `${tableName(table)} ${reason}`;
    const known = this.leftOutReasons.get(key);
    if (known) known.count += n;
    else this.leftOutReasons.set(key, { table: tableName(table), reason, count: n });
  }

  problem(message) {
    this.problems.push(message);
  }

  get notCarriedTotal() {
    return this.notCarriedRows.size + this.notCarriedOverflow;
  }

  exitCode() {
    return this.notCarriedTotal > 0 || this.problems.length > 0 ? 1 : 0;
  }

  /** The per-table counts (tables with nothing read nor done are left out). */
  tableCounts() {
    return Object.fromEntries(
      [...this.tables].filter(([, counts]) => COLUMNS.some((column) => counts[column] > 0)),
    );
  }

  toJSON() {
    return {
      server: this.server,
      dryRun: this.dryRun,
      tables: this.tableCounts(),
      bytes: this.bytes,
      leftOut: [...this.leftOutReasons.values()],
      notCarried: [...this.notCarriedRows.values()],
      notCarriedTotal: this.notCarriedTotal,
      problems: this.problems,
      ok: this.exitCode() === 0,
    };
  }

  /** The report for people, as lines. */
  lines() {
    const out = [];
    if (this.dryRun)
      out.push(
        "DRY RUN: nothing was written. The counts say what a run would do (imported, updated, deleted: would be).",
        "",
      );
    const counts = this.tableCounts();
    const rows = [
      ["table", ...COLUMNS.map((column) => HEADINGS[column])],
      ...Object.entries(counts).map(([table, c]) => [table, ...COLUMNS.map((column) => String(c[column]))]),
    ];
    const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
    for (const row of rows)
      out.push(
        row
          .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
          .join("  ")
          .trimEnd(),
      );
    if (Object.keys(counts).length === 0) out.push("(nothing read)");
    if (this.bytes > 0)
      out.push("", `File contents ${this.dryRun ? "to send" : "sent"}: ${formatBytes(this.bytes)}.`);
    if (this.leftOutReasons.size > 0) {
      out.push("", "Left out on purpose (not an error):");
      for (const { table, reason, count } of this.leftOutReasons.values())
        out.push(`  ${table}  ${count}  ${reason}`);
    }
    if (this.notCarriedTotal > 0) {
      out.push("", `Not carried (${this.notCarriedTotal}):`);
      for (const { table, id, reason } of this.notCarriedRows.values())
        out.push(`  ${table}  ${id}  ${reason}`);
      if (this.notCarriedOverflow > 0)
        out.push(
          `  … and ${this.notCarriedOverflow} more (the first ${MAX_LISTED} are listed; fix these and run again)`,
        );
    }
    for (const problem of this.problems) out.push("", problem);
    const failed = [
      this.notCarriedTotal > 0 ? `${this.notCarriedTotal} row(s) not carried` : null,
      this.problems.length > 0 ? `${this.problems.length} problem(s)` : null,
    ].filter(Boolean);
    out.push(
      "",
      failed.length === 0
        ? `Every row was ${this.dryRun ? "checked: a run would carry it or knowingly leave it out" : "carried or knowingly left out"}.`
        : `${failed.join(" and ")} (above). Fix them in ${this.system} (or here) and run the command again: what is done stays done.`,
    );
    return out;
  }
}

const emptyCounts = () => Object.fromEntries(COLUMNS.map((column) => [column, 0]));

/**
 * Progress on stderr: one line per table, at most about once a second (and always the last). On a terminal the line
 * is rewritten in place; in a log, each update is its own line.
 */
export class Progress {
  constructor(stream = process.stderr, { interval = 1000, now = Date.now } = {}) {
    this.stream = stream;
    this.interval = interval;
    this.now = now;
    this.last = 0;
    this.lastLine = null;
    this.open = false;
  }

  /** `force`: print now whatever the time (a table's final line). */
  update(table, counts, { bytes = 0, force = false } = {}) {
    const now = this.now();
    if (!force && now - this.last < this.interval) return;
    const line = progressLine(table, counts, bytes);
    if (line === this.lastLine) return;
    this.last = now;
    this.lastLine = line;
    if (this.stream.isTTY) {
      this.stream.write(`\r${line}\x1b[K`);
      this.open = true;
    } else this.stream.write(`${line}\n`);
  }

  /** A table's final line, then the next table starts on a new line. */
  done(table, counts, options = {}) {
    this.update(table, counts, { ...options, force: true });
    if (this.open) this.stream.write("\n");
    this.open = false;
  }

  note(message) {
    if (this.open) this.stream.write("\n");
    this.open = false;
    this.stream.write(`${message}\n`);
  }
}

export function progressLine(table, counts, bytes = 0) {
  const parts = COLUMNS.filter((column) => column === "read" || counts[column] > 0).map(
    (column) => `${counts[column]} ${HEADINGS[column]}`,
  );
  return `${table}: ${parts.join(", ")}${bytes > 0 ? `, ${formatBytes(bytes)}` : ""}`;
}
