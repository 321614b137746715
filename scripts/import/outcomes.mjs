// How the service's answer for one row counts in a run's report, shared by every import command (import-nhost,
// import-users): the same outcomes, the same exit code, the same lines.

const OUTCOMES = new Set(["imported", "updated", "unchanged", "kept"]);

/**
 * Counts one result of the service into the report: the row's table, and (for a user) the rows that went with it.
 * `parts`: table → how many rows of it the bundle held.
 */
export function countOutcome(report, table, result, parts = {}) {
  const outcome = OUTCOMES.has(result.outcome) ? result.outcome : "skipped";
  report.add(table, outcome);
  for (const [part, n] of Object.entries(parts)) report.add(part, outcome, n);
  if (outcome === "skipped") {
    const reasons = result.reasons?.length
      ? result.reasons
      : [{ table, id: result.id, reason: `not imported (${result.outcome ?? "no answer"})` }];
    for (const reason of reasons)
      report.notCarried(reason.table ?? table, reason.id ?? result.id, reason.reason);
  } else if (outcome === "kept") {
    for (const reason of result.reasons ?? []) report.leftOut(reason.table ?? table, reason.reason);
  }
  // Imported, but a part of it not (notCarried: exit 1) or knowingly left (an expired or spent token): a part's row
  // moves from the bundle's outcome to the column that says what happened to it.
  // A kept or unchanged user whose new session (or key, identity) this run carried: that row counts as imported.
  for (const row of result.carried ?? []) {
    const at = row.table ?? table;
    if (outcome === "imported" || outcome === "skipped" || !(report.counts(at)[outcome] > 0)) continue;
    report.add(at, outcome, -1);
    report.add(at, "imported");
  }
  for (const warning of result.warnings ?? []) {
    const at = warning.table ?? table;
    if (warning.notCarried) report.notCarried(at, warning.id ?? result.id, warning.reason);
    else report.leftOut(at, warning.reason);
    if (at !== table && report.counts(at)[outcome] > 0) {
      report.add(at, outcome, -1);
      report.add(at, warning.notCarried ? "skipped" : "leftOut");
    }
  }
}

/** What `POST …/completed` records: the counts, not the lists (they can be long). */
export function completedReport(report) {
  const { tables, bytes, leftOut, notCarriedTotal, problems } = report.toJSON();
  return { tables, bytes, leftOut, notCarried: notCarriedTotal, problems };
}
