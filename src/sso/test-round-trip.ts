import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Context } from "hono";
import { type SsoConnectionRow, ssoConnections } from "../db/schema";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import type { Deps } from "../http/deps";
import { sameBrowser, ssoFailure } from "./finish";
import { emailInsideDomains } from "./jit";
import type { PendingSsoRequest, SsoIdentity } from "./requests";

/**
 * "Test the connection" (contract operators.md §5): a real round trip to the IdP through a connection, enabled or not
 * (a setup link's connection is tested before an owner enables it), that signs nobody in. The IdP's answer is
 * verified exactly as a sign-in's (the same ACS and callback, signatures, audience, InResponseTo, nonce, one use),
 * then the asserted email is checked against the domains the connection serves; the outcome is recorded on the
 * connection (`last_test`, and `tested_at` when it succeeded) and the browser goes back to `returnTo`.
 */

/** Records the test's outcome: `ok` with the asserted email, or the refusal's code. */
async function record(
  deps: Deps,
  connectionId: string,
  outcome: { ok: boolean; email?: string; error?: string },
) {
  const at = deps.now();
  await deps.db
    .update(ssoConnections)
    .set({ lastTest: { at, ...outcome }, ...(outcome.ok ? { testedAt: at } : {}), updatedAt: at })
    .where(eq(ssoConnections.id, connectionId))
    .run();
}

/**
 * The end of a test round trip (the OIDC callback or the SAML ACS's GET of a request started as a test): only in the
 * browser that started it; a verified identity whose email is outside the connection's domains is a failed test.
 */
export async function finishConnectionTest(
  c: Context<AppEnv>,
  connection: SsoConnectionRow,
  identity: SsoIdentity | null,
  request: PendingSsoRequest,
  refusal?: unknown,
): Promise<Response> {
  const deps = c.var.deps;
  if (!(await sameBrowser(c, connection, request)) || connection.id !== request.connectionId) {
    return ssoFailure(
      c,
      request.redirectTo,
      new AppError("invalid-state", "this test was started in another browser"),
    );
  }
  let outcome: { ok: boolean; email?: string; error?: string };
  try {
    if (refusal) throw refusal;
    outcome = { ok: true, email: await emailInsideDomains(deps, connection, identity!) };
  } catch (error) {
    if (!(error instanceof AppError) || error.status >= 500) throw error;
    outcome = {
      ok: false,
      error: error.code,
      ...(identity?.email ? { email: identity.email.slice(0, 254) } : {}),
    };
  }
  await record(deps, connection.id, outcome);
  return c.redirect(request.redirectTo, 302);
}

/**
 * True once per successful test of a connection not enabled yet: whoever gets true tells the org's owners it is ready
 * to enable (one conditional UPDATE, so two landings of one test mail once).
 */
export async function claimReadyNotice(deps: Pick<Deps, "db">, connectionId: string): Promise<boolean> {
  const claimed = await deps.db
    .update(ssoConnections)
    .set({ lastTest: sql`json_set(${ssoConnections.lastTest}, '$.noticed', 1)` })
    .where(
      and(
        eq(ssoConnections.id, connectionId),
        eq(ssoConnections.enabled, false),
        isNotNull(ssoConnections.testedAt),
        sql`json_extract(${ssoConnections.lastTest}, '$.ok') = 1`,
        sql`json_extract(${ssoConnections.lastTest}, '$.noticed') IS NULL`,
      ),
    )
    .returning({ id: ssoConnections.id })
    .get();
  return claimed !== undefined;
}
