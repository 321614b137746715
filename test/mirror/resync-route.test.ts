// `POST /admin/mirror/resync` where no working mirror is (contract move-in §5.1): the suite's Worker has no MIRROR_DB
// binding, and a binding to a port nothing listens on stands for a Postgres that is down. The resync itself, against a
// real Postgres, is in test/compat/mirror.test.ts.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { service } from "../helpers";

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

async function resync(
  svc: ReturnType<typeof service>,
  json: unknown = {},
  headers: Record<string, string> = ADMIN,
) {
  const response = await svc.request("POST", "/admin/mirror/resync", { headers, json });
  return { status: response.status, body: (await response.json()) as Record<string, unknown>, response };
}

describe("mirror resync without a working mirror", () => {
  // Threat: an operator runs the resync against a deployment without the binding and believes it worked, or is told
  // to try later (a 503, as the fuzz of issue 42 found) when nothing will change until the setting is made.
  it("answers 409 naming the setting when MIRROR_DB is not configured", async () => {
    const { status, body, response } = await resync(service());
    expect(status).toBe(409);
    expect(body).toMatchObject({ status: 409, error: "disabled-endpoint" });
    expect(response.headers.get("retry-after")).toBeNull();
    expect(body.message).toMatch(/MIRROR_DB/);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  // Threat: a Postgres that is down turns into a 500 with a driver's message, or hangs the request.
  it("answers 503 when the mirror's Postgres cannot be reached, naming neither its host nor its password", async () => {
    const down = { connectionString: "postgres://mirror:s3cret-password@127.0.0.1:1/app" } as Hyperdrive;
    const { status, body } = await resync(service({ MIRROR_DB: down }));
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 503, error: "service-unavailable" });
    expect(JSON.stringify(body)).not.toMatch(/s3cret|127\.0\.0\.1/);
  });

  // Threat: the admin API's resync open to anyone, or a made-up cursor reaching Postgres.
  it("needs the admin secret, and refuses a cursor it did not give", async () => {
    expect((await resync(service(), {}, {})).status).toBe(401);
    const bad = await resync(service(), { cursor: "users-and-more:x" });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe("invalid-request");
    expect((await resync(service(), { cursor: "prune-users:not-a-uuid" })).status).toBe(400);
  });
});
