// The Postgres the compatibility server mirrors into (contract move-in §5.1): a throwaway server
// (test/support/postgres.ts) with an empty database `mirror`, bound to `wrangler dev` as MIRROR_DB the way `npm start`
// binds AUTH_MIRROR_DATABASE_URL (scripts/mirror-binding.mjs). Started by the global setup (wrangler-dev.ts) because
// the binding is fixed when wrangler starts; every file's sign-ups flow into it, test/compat/mirror*.test.ts read it.
import pg from "pg";
import { startPostgres } from "../support/postgres";

export interface MirrorDatabase {
  /** The mirror's database, for reading what the service wrote (no password: the test server trusts loopback). */
  url: string;
  /** Another database of the same server, from which a test can refuse connections to `mirror` and allow them again. */
  adminUrl: string;
}

export async function startMirrorDatabase(): Promise<MirrorDatabase & { stop(): Promise<void> }> {
  const server = await startPostgres();
  const admin = new URL(server.url);
  admin.pathname = "/postgres";
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query("CREATE DATABASE mirror");
  } finally {
    await client.end();
  }
  const url = new URL(server.url);
  url.pathname = "/mirror";
  return { url: url.toString(), adminUrl: admin.toString(), stop: () => server.stop() };
}

/** Refuses every new connection to the mirror's database and ends the open ones: the database is "down". */
export async function refuseMirrorConnections(adminUrl: string): Promise<void> {
  await adminQuery(adminUrl, "ALTER DATABASE mirror ALLOW_CONNECTIONS false");
  await adminQuery(
    adminUrl,
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'mirror' AND pid <> pg_backend_pid()",
  );
}

export async function allowMirrorConnections(adminUrl: string): Promise<void> {
  await adminQuery(adminUrl, "ALTER DATABASE mirror ALLOW_CONNECTIONS true");
}

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
