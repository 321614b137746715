// Issue 43, "Speed": the Supabase face adds no D1 round trip and no Durable Object call over the Nhost face doing the
// same thing. Counted through bindings that count (test/support/counting-bindings.ts), one account, each face's
// request right after the Nhost one's, both warm (an isolate's first request also reads the key set). What is pinned
// is the count; the SQL is in the message, to say what differs when a count does.
import type { Session } from "@supabase/supabase-js";
import { beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, uniqueEmail, type WireSession } from "../../helpers";
import { countingRoundTrips, type RoundTrips } from "../../support/counting-bindings";
import { supabaseClient, supabaseService } from "./support";

const trips: RoundTrips = { d1: [], objects: {} };
const svc = supabaseService(countingRoundTrips(trips));
const supabase = supabaseClient(svc);
const email = uniqueEmail("speed");

/** What `work` asked of storage (the work after the answer included: the test service waits for it). */
async function counted(work: () => Promise<unknown>): Promise<RoundTrips> {
  trips.d1 = [];
  trips.objects = {};
  await work();
  return { d1: [...trips.d1], objects: { ...trips.objects } };
}

async function nhostSignIn(): Promise<WireSession> {
  const answer = await svc.post("/signin/email-password", { email, password: PASSWORD });
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { session: WireSession }).session;
}

async function faceSignIn(): Promise<Session> {
  const { data, error } = await supabase.auth.signInWithPassword({ email, password: PASSWORD });
  expect(error).toBeNull();
  return data.session!;
}

function expectSameCost(face: RoundTrips, nhost: RoundTrips) {
  expect(face.d1.length, `face:\n${face.d1.join("\n")}\n\nNhost:\n${nhost.d1.join("\n")}`).toBe(
    nhost.d1.length,
  );
  expect(face.objects).toEqual(nhost.objects);
}

let nhost: WireSession;
let face: Session;

beforeAll(async () => {
  expect((await svc.post("/signup/email-password", { email, password: PASSWORD })).status).toBe(200);
  nhost = await nhostSignIn();
  face = await faceSignIn();
});

describe("the Supabase face's storage calls against the Nhost face's", () => {
  it("signInWithPassword: as many D1 round trips and object calls as POST /signin/email-password", async () => {
    const nhostCost = await counted(nhostSignIn);
    const faceCost = await counted(faceSignIn);
    expectSameCost(faceCost, nhostCost);
    // The session's event goes to the queue after the answer, as the Nhost sign-in's: a `/token` that signs in is no
    // refresh (src/events/outbox.ts mayHaveWritten), so a webhook does not wait for the minute's cron.
    expect(faceCost.d1.some((sql) => sql.startsWith('delete from "event_outbox"'))).toBe(true);
    // The user's identities and factors ride in the batch that writes the session (writeSession's `alongside`).
    expect(
      faceCost.d1.some((sql) => sql.startsWith('insert into "sessions"') && sql.includes("user_providers")),
    ).toBe(true);
  });

  it("getUser: one D1 read, as GET /user, and no object", async () => {
    const nhostCost = await counted(async () =>
      expect((await svc.get("/user", nhost.accessToken)).status).toBe(200),
    );
    const faceCost = await counted(async () =>
      expect((await supabase.auth.getUser(face.access_token)).error).toBeNull(),
    );
    expectSameCost(faceCost, nhostCost);
    expect(faceCost).toEqual({ d1: [expect.stringContaining('from "sessions"')], objects: {} });
  });

  it("refreshSession: one D1 round trip and one family object, as POST /token", async () => {
    const nhostCost = await counted(async () => {
      const answer = await svc.post("/token", { refreshToken: nhost.refreshToken });
      expect(answer.status).toBe(200);
    });
    const faceCost = await counted(async () => {
      const { error } = await supabase.auth.refreshSession({ refresh_token: face.refresh_token });
      expect(error).toBeNull();
    });
    expectSameCost(faceCost, nhostCost);
    expect(faceCost.d1).toHaveLength(1);
    // One statement, as the Nhost refresh's (no batch): the identities and factors ride in the session's read
    // (renewSession's `alongside`, the face's liveUserExtrasRead), where a batch of three statements was before.
    expect(faceCost.d1[0]).not.toContain(";\n");
    for (const table of ['from "sessions"', '"user_providers"', '"mfa_factors"'])
      expect(faceCost.d1[0]).toContain(table);
    expect(faceCost.objects).toEqual({ SESSION_FAMILIES: 1 });
  });
});
