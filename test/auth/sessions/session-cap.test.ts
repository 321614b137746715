// A user has at most AUTH_MAX_SESSIONS_PER_USER sessions (200 by default; 5 here, which proves the same for less:
// src/auth/session-cap.ts): a sign-in past it ends the least recently used one, in
// D1 and in its family's object, so "sign out everywhere" reaches every session in its object and the service
// binding's `live` check (which asks only the objects) sees every one of them end.
import { describe, expect, it } from "vitest";
import { NO_VERIFICATION, service, signUp, uniqueEmail, type WireSession } from "../../helpers";
import { authenticateThrough } from "../../platform/support";

const CAP = 5;
const svc = service({ ...NO_VERIFICATION, AUTH_MAX_SESSIONS_PER_USER: String(CAP) });

/** A new session of the PAT's user: the cheapest sign-in (no password hash), through the same session writer. */
async function signIn(personalAccessToken: string): Promise<WireSession> {
  const response = await svc.post("/signin/pat", { personalAccessToken });
  expect(response.status, await response.clone().text()).toBe(200);
  return ((await response.json()) as { session: WireSession }).session;
}

const liveThroughBinding = async (session: WireSession) =>
  (await authenticateThrough({ authorization: `Bearer ${session.accessToken}` }, { options: { live: true } }))
    ?.session?.live === true;

describe("at most AUTH_MAX_SESSIONS_PER_USER sessions per user", () => {
  // Threat: a script (or someone holding the password) signing in without end fills the user's shard with session
  // rows, and a sign-out everywhere that ends them in their objects only up to a bound leaves the rest live to the
  // service binding's `live` check until their access tokens expire.
  it("a sign-in past the cap ends the oldest session; sign-out everywhere then ends every one, live included", async () => {
    const email = uniqueEmail("session-cap");
    const oldest = await signUp(svc, email);
    const created = await svc.post(
      "/pat",
      { expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
      oldest.accessToken,
    );
    const { personalAccessToken: pat } = (await created.json()) as { personalAccessToken: string };
    const others: WireSession[] = [];
    // Ten at a time: enough to be quick, few enough that the one workerd is not swamped.
    for (let made = 1; made < CAP; made += 10)
      others.push(
        ...(await Promise.all(Array.from({ length: Math.min(10, CAP - made) }, () => signIn(pat)))),
      );
    expect(others).toHaveLength(CAP - 1);
    expect(await liveThroughBinding(oldest)).toBe(true);

    const newest = await signIn(pat);
    // The oldest ended: its refresh is refused, the binding's `live` no longer finds it, the list does not show it.
    const refresh = await svc.post("/token", { refreshToken: oldest.refreshToken });
    expect(refresh.status).toBe(401);
    expect(await liveThroughBinding(oldest)).toBe(false);
    const listed = await svc.get("/user/sessions", newest.accessToken);
    const { items } = (await listed.json()) as { items: { id: string }[] };
    expect(items).toHaveLength(CAP);
    expect(items.map((item) => item.id)).not.toContain(oldest.refreshTokenId);

    // Sign out everywhere from the newest: every other session is refused by `live` at once, the oldest of them too.
    const everywhere = await svc.post("/signout", { all: true }, newest.accessToken);
    expect(everywhere.status).toBe(200);
    const stillLive = await Promise.all([...others, newest].map(liveThroughBinding));
    expect(stillLive.filter(Boolean)).toEqual([]);
  });
});
