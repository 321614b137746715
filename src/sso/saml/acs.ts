import { eq, lt, notExists, sql } from "drizzle-orm";
import { type SsoConnectionRow, ssoAssertionIds, ssoConnections } from "../../db/schema";
import { AppError } from "../../errors";
import type { Deps } from "../../http/deps";
import { sha256Hex } from "../../lib/crypto";
import { isRedirectAllowedBy } from "../../lib/redirect";
import { keepResult, keepUnsolicitedResult, type SsoIdentity } from "../requests";
import { identityOf } from "./identity";
import { acsUrl, samlSettingsOf, spEntityId } from "./metadata";
import { decodeSamlResponse, verifySamlResponse } from "./verify-response";
import { XmlRefused } from "./xml";

/**
 * The ACS's POST (contract organizations.md §2): a cross-site form post from the IdP, which carries no SameSite=Lax
 * cookie and so cannot show which browser it comes from. It verifies the response, accepts its assertion ID once, and
 * keeps the identity server-side on the pending sign-in its `InResponseTo` names (./requests.ts `keepResult`),
 * returning a one-time id; the browser is bounced with it to the ACS's GET, where the binding cookie is readable.
 * The SAMLResponse itself never goes into a URL.
 */

const refused = (message: string) => new AppError("sso-assertion-invalid", message);

export const connectionNotFound = () =>
  new AppError("sso-connection-not-found", "no enabled SAML connection has this id");

/**
 * The SAML connection `connectionId`, enabled (or, with `orNotYetEnabled`, a setup link's connection an owner has not
 * enabled yet, which answers only test round trips: operators.md §5); anything else is the same 404.
 */
export async function samlConnection(
  deps: Pick<Deps, "db">,
  connectionId: string,
  orNotYetEnabled = false,
): Promise<SsoConnectionRow> {
  const connection =
    connectionId.length <= 64
      ? await deps.db.select().from(ssoConnections).where(eq(ssoConnections.id, connectionId)).get()
      : undefined;
  const usable = connection?.enabled || (orNotYetEnabled && connection?.setupLinkId);
  if (connection?.type !== "saml" || !usable) throw connectionNotFound();
  return connection;
}

const replayed = () => refused("this assertion was already used (replay)");

/** The assertion ID's row: SHA-256 of `<connection id>:<assertion id>`, kept until the assertion could not be used. */
async function assertionIdRow(connectionId: string, assertionId: string, validUntil: number) {
  return { idHash: await sha256Hex(`${connectionId}:${assertionId}`), expiresAt: validUntil };
}

/** Expired assertion IDs pruned after the answer. */
function pruneAssertionIds(deps: Deps) {
  deps.background(deps.db.delete(ssoAssertionIds).where(lt(ssoAssertionIds.expiresAt, deps.now())).run());
}

/**
 * Accepts each assertion ID once per connection (SAML profiles §4.1.4.5): the insert that conflicts is a replay.
 * Kept until the assertion could no longer be presented anyway; expired entries are pruned after the answer.
 */
async function acceptOnce(deps: Deps, connectionId: string, assertionId: string, validUntil: number) {
  const inserted = await deps.db
    .insert(ssoAssertionIds)
    .values(await assertionIdRow(connectionId, assertionId, validUntil))
    .onConflictDoNothing()
    .returning({ idHash: ssoAssertionIds.idHash })
    .get();
  pruneAssertionIds(deps);
  if (!inserted) throw replayed();
}

/**
 * An answer to a sign-in started here: the assertion ID spent and the identity kept on the pending request in ONE
 * D1 batch, one round trip to the primary instead of two (issue 48, "Round trips"; docs/performance.md). A batch is
 * one transaction, so the single use stays atomic: the keep runs first and only if the ID was never seen (`NOT
 * EXISTS`), then the ID's insert, which conflicts on a replay. A replay keeps nothing, and two posts of one response
 * at once cannot both keep. Returns the one-time id, or undefined when no pending request matched (the ID is spent
 * all the same, as before).
 */
async function acceptOnceAndKeep(
  deps: Deps,
  connectionId: string,
  assertion: { assertionId: string; validUntil: number; inResponseTo: string },
  identity: SsoIdentity,
  testOnly: boolean,
): Promise<string | undefined> {
  const row = await assertionIdRow(connectionId, assertion.assertionId, assertion.validUntil);
  const unseen = notExists(
    deps.db.select({ one: sql`1` }).from(ssoAssertionIds).where(eq(ssoAssertionIds.idHash, row.idHash)),
  );
  const keep = await keepResult(deps, connectionId, assertion.inResponseTo, identity, testOnly, unseen);
  if (!keep) {
    // An InResponseTo too long to name any request: the ID spent alone, as before.
    await acceptOnce(deps, connectionId, assertion.assertionId, assertion.validUntil);
    return undefined;
  }
  const spend = deps.db
    .insert(ssoAssertionIds)
    .values(row)
    .onConflictDoNothing()
    .returning({ idHash: ssoAssertionIds.idHash });
  const [kept, inserted] = await deps.db.batch([keep.statement, spend]);
  pruneAssertionIds(deps);
  if (inserted.length === 0) throw replayed();
  return kept.length > 0 ? keep.oneTimeId : undefined;
}

/** Verifies the posted response; returns the one-time id of the kept result. Every refusal is a 4xx AppError. */
export async function acceptSamlResponse(
  deps: Deps,
  connection: SsoConnectionRow,
  form: { SAMLResponse?: string; RelayState?: string },
): Promise<string> {
  const settings = samlSettingsOf(connection.settings);
  let assertion: ReturnType<typeof verifySamlResponse>;
  try {
    assertion = verifySamlResponse(decodeSamlResponse(form.SAMLResponse), {
      idpEntityId: settings.idpEntityId,
      certificates: settings.certificates,
      spEntityId: spEntityId(deps.config, connection.id),
      acsUrl: acsUrl(deps.config, connection.id),
      now: deps.now(),
    });
  } catch (error) {
    if (error instanceof XmlRefused) throw refused(`the SAML response was refused: ${error.message}`);
    throw error;
  }
  const identity = identityOf(assertion);
  if (!identity) throw refused("the SAML assertion names no email address (NameID or an email attribute)");
  // IdP-initiated is refused before the assertion ID is spent, so the same assertion can't be tried twice either way.
  if (!assertion.inResponseTo && (!connection.allowIdpInitiated || !connection.enabled)) {
    throw refused(
      "IdP-initiated sign-in is not allowed for this connection (the response answers no request)",
    );
  }
  if (assertion.inResponseTo) {
    // Not enabled yet: the response must answer a test round trip, never a sign-in.
    const oneTimeId = await acceptOnceAndKeep(
      deps,
      connection.id,
      { ...assertion, inResponseTo: assertion.inResponseTo },
      identity,
      !connection.enabled,
    );
    if (!oneTimeId) {
      throw new AppError(
        "invalid-state",
        "the SAML response answers no sign-in under way here (InResponseTo unknown, expired or already answered)",
      );
    }
    return oneTimeId;
  }
  await acceptOnce(deps, connection.id, assertion.assertionId, assertion.validUntil);
  // IdP-initiated: RelayState may name where to land, under the same allow-list as every redirectTo.
  const relayState = form.RelayState;
  const redirectTo =
    relayState && relayState.length <= 2048 && isRedirectAllowedBy(deps.config, relayState)
      ? relayState
      : deps.config.urls.defaultRedirect;
  return keepUnsolicitedResult(deps, connection.id, redirectTo, identity);
}
