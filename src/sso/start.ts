import { and, asc, eq, isNotNull } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { z } from "zod";
import { resolveRedirectTo } from "../auth";
import { organizations, orgDomains, type SsoConnectionRow, ssoConnections } from "../db/schema";
import { AppError } from "../errors";
import type { Deps } from "../http/deps";
import { isOwnSignedRedirect } from "../lib/redirect";
import { findConnection } from "./connections";
import { oidcAuthorizationUrl } from "./oidc";
import { saveSsoRequest } from "./requests";
import { newSamlRequestId, samlAuthnRequestUrl } from "./saml";

/**
 * `POST /sso/start` (contract organizations.md §2): which connection signs this person in (the verified domain of
 * their email, a domain, or an org's slug), a pending request saved for the browser that asked, and the IdP's URL.
 */

export const startSchema = z
  .strictObject({
    email: z.email().max(254).optional(),
    domain: z.string().min(1).max(253).optional(),
    orgSlug: z.string().min(1).max(100).optional(),
    redirectTo: z.string().max(2048).optional(),
  })
  .refine(
    (body) => [body.email, body.domain, body.orgSlug].filter((v) => v !== undefined).length === 1,
    "give exactly one of email, domain and orgSlug",
  );

export type StartRequest = z.infer<typeof startSchema>;

export const domainOfEmail = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase();

/** The organization that verified `domain`, if one did (at most one can: the partial unique index). */
export async function orgOfVerifiedDomain(
  deps: Pick<Deps, "db">,
  domain: string,
): Promise<string | undefined> {
  const row = await deps.db
    .select({ orgId: orgDomains.orgId })
    .from(orgDomains)
    .where(
      and(eq(orgDomains.domain, domain.toLowerCase().replace(/\.$/, "")), isNotNull(orgDomains.verifiedAt)),
    )
    .get();
  return row?.orgId;
}

/**
 * The org's enabled connection (the oldest, when it has several) that serves `domain`: one limited to some domains
 * (a setup link's, operators.md §5) is passed over for the others.
 */
async function connectionOfOrg(
  deps: Pick<Deps, "db">,
  orgId: string,
  domain?: string,
): Promise<SsoConnectionRow | undefined> {
  const rows = await deps.db
    .select()
    .from(ssoConnections)
    .where(and(eq(ssoConnections.orgId, orgId), eq(ssoConnections.enabled, true)))
    .orderBy(asc(ssoConnections.createdAt), asc(ssoConnections.id))
    .all();
  return rows.find((row) => !domain || !row.domains || row.domains.includes(domain)) ?? rows[0];
}

/** The connection that signs in an email of this domain: the built-in page asks before it offers a password. */
export async function connectionForEmail(
  deps: Pick<Deps, "db">,
  email: string,
): Promise<SsoConnectionRow | undefined> {
  const domain = domainOfEmail(email);
  const orgId = await orgOfVerifiedDomain(deps, domain);
  return orgId ? connectionOfOrg(deps, orgId, domain) : undefined;
}

async function connectionFor(
  deps: Pick<Deps, "db">,
  body: StartRequest,
  connectionId?: string,
): Promise<SsoConnectionRow> {
  if (connectionId !== undefined) {
    const connection = await findConnection(deps, connectionId);
    if (!connection?.enabled) throw new AppError("sso-connection-not-found");
    return connection;
  }
  let orgId: string | undefined;
  let domain: string | undefined;
  if (body.orgSlug !== undefined) {
    const org = await deps.db
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.slug, body.orgSlug.toLowerCase()))
      .get();
    orgId = org?.id;
  } else {
    domain = (body.domain ?? domainOfEmail(body.email!)).toLowerCase().replace(/\.$/, "");
    orgId = await orgOfVerifiedDomain(deps, domain);
  }
  const connection = orgId ? await connectionOfOrg(deps, orgId, domain) : undefined;
  if (!connection) throw new AppError("sso-connection-not-found");
  return connection;
}

/** The enabled connection of a verified domain or of an id (the Supabase face's `signInWithSSO`); else a 404. */
export const findSsoConnection = (
  deps: Pick<Deps, "db">,
  lookup: { domain: string } | { connectionId: string },
): Promise<SsoConnectionRow> =>
  "domain" in lookup
    ? connectionFor(deps, { domain: lookup.domain })
    : connectionFor(deps, {}, lookup.connectionId);

/**
 * A face's own way back (the Supabase face's `signInWithSSO`, src/faces/supabase/), as for provider sign-ins
 * (src/providers/flow.ts `CodeReturn`): the end is a one-time exchange code bound to `codeChallenge` at `returnTo`
 * (the face's code's choice, no allow-list), and the connection may be named by its id (GoTrue's `provider_id`).
 */
export interface SsoCodeReturn {
  returnTo: string;
  codeChallenge: string;
  connectionId?: string;
}

/**
 * Saves the pending sign-in for the browser whose binding hash is `browserHash` and answers the IdP's URL. A bad
 * `redirectTo` is a 400 (checked first: nowhere safe to send the browser); no connection is a 404.
 */
export async function startSsoSignIn(
  deps: Deps,
  body: StartRequest,
  browserHash: string,
  codeReturn?: SsoCodeReturn,
): Promise<string> {
  // The built-in page sends people here with a target the service signed for itself, like provider sign-ins.
  const redirectTo = codeReturn
    ? codeReturn.returnTo
    : body.redirectTo !== undefined && (await isOwnSignedRedirect(deps.config, body.redirectTo))
      ? body.redirectTo
      : resolveRedirectTo(deps.config, body.redirectTo);
  const connection = await connectionFor(deps, body, codeReturn?.connectionId);
  return pendingSignIn(deps, connection, {
    redirectTo,
    browserHash,
    codeChallenge: codeReturn?.codeChallenge,
    loginHint: body.email,
  });
}

/**
 * The IdP's URL for a sign-in (or a test round trip) through `connection`, its pending request saved for this
 * browser: for SAML an AuthnRequest whose ID the answer must name, for OIDC state, nonce and a PKCE verifier.
 */
export async function pendingSignIn(
  deps: Deps,
  connection: SsoConnectionRow,
  pending: {
    redirectTo: string;
    browserHash: string;
    codeChallenge?: string;
    loginHint?: string;
    test?: boolean;
  },
): Promise<string> {
  const { redirectTo, browserHash, codeChallenge, test } = pending;
  if (connection.type === "saml") {
    const requestId = newSamlRequestId();
    const url = await samlAuthnRequestUrl(deps, connection, requestId);
    await saveSsoRequest(deps, {
      connectionId: connection.id,
      state: requestId,
      redirectTo,
      browserHash,
      codeChallenge,
      test,
    });
    return url;
  }
  const start = {
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    codeVerifier: oauth.generateRandomCodeVerifier(),
    ...(pending.loginHint ? { loginHint: pending.loginHint } : {}),
  };
  // Discovery first: an IdP that is down answers 503 before anything is saved.
  const url = await oidcAuthorizationUrl(deps, connection, start);
  await saveSsoRequest(deps, {
    connectionId: connection.id,
    redirectTo,
    browserHash,
    codeChallenge,
    test,
    ...start,
  });
  return url;
}

/**
 * The IdP's URL for a "test the connection" round trip (./test-round-trip.ts; contract operators.md §5) through the
 * connection, enabled or not, bound to this browser (`browserHash`); it ends at `returnTo`.
 */
export const startConnectionTest = (
  deps: Deps,
  connection: SsoConnectionRow,
  browserHash: string,
  returnTo: string,
) => pendingSignIn(deps, connection, { redirectTo: returnTo, browserHash, test: true });
