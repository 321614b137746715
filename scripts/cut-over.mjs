// `npm run admin -- cut-over`: records when the app switched from the old system (contract supabase.md §6), through
// the admin API (`POST /admin/import/cut-over`). Until it is recorded, the old system's access tokens are accepted
// nowhere; from it, only those issued no later than it, until the ceiling it prints.

const SYSTEMS = ["nhost", "supabase"];

export const cutOver = {
  summary:
    "record when the app switched from the old system: its access tokens are accepted until the ceiling",
  usage:
    "cut-over [--at ISO-TIME] [--system nhost|supabase] [--show]\n\n" +
    "  --at ISO-TIME   when the app switched (default: now), e.g. 2026-03-01T09:00:00Z; not in the future\n" +
    "  --system S      the system moved from: nhost (default; AUTH_IMPORTED_JWT_SECRET) or supabase\n" +
    "                  (AUTH_IMPORTED_SUPABASE_JWT_SECRET, and the old anon and service_role keys)\n" +
    "  --show          print what is recorded, record nothing\n\n" +
    "  Run it when the app's traffic has moved here (docs/migrating-from-nhost.md). Old access tokens issued\n" +
    "  after it are refused; none is accepted after the ceiling (the cut-over plus\n" +
    "  AUTH_IMPORTED_JWT_MAX_LIFETIME): then remove AUTH_IMPORTED_JWT_SECRET. Running it again replaces it.",
  options: {
    at: { type: "string" },
    system: { type: "string" },
    show: { type: "boolean", default: false },
  },
  async run(cli, values) {
    if (values.show) {
      const recorded = await cli.call("GET", "/import/cut-over");
      cli.show(recorded, () => {
        cli.table(recorded.items, ["system", "at", "acceptedUntil", "secretSet", "recordedAt"]);
        console.log(`\nAUTH_IMPORTED_JWT_MAX_LIFETIME: ${recorded.maxLifetime} s`);
      });
      return;
    }
    const system = values.system ?? "nhost";
    if (!SYSTEMS.includes(system)) cli.usageError(`--system must be one of ${SYSTEMS.join(", ")}`);
    let at;
    if (values.at !== undefined) {
      const parsed = Date.parse(values.at);
      if (Number.isNaN(parsed))
        cli.usageError(`--at ${values.at} is not a time (ISO 8601, e.g. 2026-03-01T09:00:00Z)`);
      at = new Date(parsed).toISOString();
    }
    const recorded = await cli.call("POST", "/import/cut-over", { system, ...(at ? { at } : {}) });
    cli.show(recorded, () => {
      cli.record(recorded, ["system", "at", "acceptedUntil", "secretSet"]);
      console.log(
        `\nOld ${system} access tokens issued until ${recorded.at} are accepted, read-only, until ${recorded.acceptedUntil}.` +
          "\nAfter that, remove the old system's secret" +
          (system === "nhost"
            ? " (AUTH_IMPORTED_JWT_SECRET)."
            : " (AUTH_IMPORTED_SUPABASE_JWT_SECRET); the old anon and service_role keys stop then too."),
      );
    });
  },
};
