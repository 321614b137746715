// The old project's legacy `anon` and `service_role` keys (SUPABASE_ANON_KEY, SUPABASE_SERVICE_KEY in the
// environment: npm prints a command line, so secrets never come as flags) → `POST /admin/import/supabase/api-keys`
// (src/faces/supabase/old-api-keys.ts), once per run: the service keeps their SHA-256 and takes them, on the Supabase
// face, as its publishable and secret key from the recorded cut-over until its ceiling. docs/supabase-sessions-import.md §3.
import { withRetries } from "../import-nhost/api.mjs";

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;

/** The keys to record, or null when the environment gives none. */
export function oldApiKeys(env = process.env) {
  const body = {};
  if (env.SUPABASE_ANON_KEY) body.anonKey = env.SUPABASE_ANON_KEY.trim();
  // SUPABASE_SERVICE_KEY may be a new-style secret key (`sb_secret_…`), given for --files-from only: only a legacy
  // key (a JWT) can be recorded, and refusing the other would fail every run.
  const service = env.SUPABASE_SERVICE_KEY?.trim();
  if (service && JWT.test(service)) body.serviceRoleKey = service;
  return Object.keys(body).length > 0 ? body : null;
}

/**
 * Records the keys (not in a dry run: counted only). A refused key or a server without the Supabase face is a problem
 * of the report (exit 1), not a stop: the users are carried all the same, and the next run records the keys.
 */
export async function recordApiKeys({ cli, report, progress, dryRun }) {
  const body = oldApiKeys();
  if (!body) return;
  const named = Object.keys(body).length;
  if (dryRun) {
    report.add("project.api_keys", "imported", named);
    return;
  }
  const url = `${cli.server}/admin/import/supabase/api-keys`;
  const { response, error } = await withRetries(() =>
    fetch(url, {
      method: "POST",
      headers: { "x-hasura-admin-secret": cli.secret(), "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
  if (error) cli.fail(`${cli.unreachable(url)} (${error.message}). Nothing is lost: run the command again.`);
  const text = await response.text();
  let answer = null;
  try {
    answer = JSON.parse(text);
  } catch {}
  if (response.ok) {
    report.add("project.api_keys", "imported", named);
    progress.note(`api keys: ${Object.keys(body).join(", ")} recorded`);
    return;
  }
  report.add("project.api_keys", "skipped", named);
  report.problem(
    response.status === 404
      ? `api keys: not recorded, ${url} answered 404: the Supabase face is not enabled on this server. ` +
          "Set AUTH_SUPABASE_API_ENABLED=true and run again to record SUPABASE_ANON_KEY / SUPABASE_SERVICE_KEY."
      : `api keys: not recorded (${cli.failure("POST", url, response.status, answer, text)})`,
  );
}
