import { Hono } from "hono";
import { AppError } from "../errors";
import type { AppEnv } from "../http/app-env";
import { requireAuth } from "../http/auth";
import { operation } from "../http/documented";
import { pageQuery, pageSchema } from "../http/paging";
import { jsonBody, queryParams } from "../http/validation";
import { rateLimit } from "../rate-limits/middleware";
import { HASURA_NAMESPACE } from "../signing-keys/jwt";
import { acceptInvitation } from "./invitations";
import { requireOrgRole } from "./members";
import { createOrg, listUserOrgs } from "./organizations";
import { type OrgGuard, orgResourceRoutes } from "./resource-routes";
import { acceptBody, createOrgBody, myOrgSchema, orgSchema, toWireOrg } from "./wire";

/**
 * The organizations' user routes (contract organizations.md §1), bearer access token. Every `/orgs/{orgId}…` route
 * first asks `requireOrgRole`: no active membership answers 404 `not-found` (an outsider can't tell the org
 * exists), a role that does not allow the action 403 `insufficient-org-role`.
 */

/** A member acting in their org: their role decides, and an outsider can't tell the org exists. */
const memberGuard: OrgGuard = {
  security: "bearer",
  refusals: "404 `not-found` when the caller is no active member (the org's existence is not revealed).",
  actor: async (c, orgId, roles) => {
    const userId = c.var.auth!.sub;
    return { userId, role: (await requireOrgRole(c.var.deps, orgId, userId, roles)).role };
  },
  orgAnswer: { schema: myOrgSchema, shape: (org, actor) => ({ ...org, role: actor.role }) },
  audit: () => {},
  // Counted per client address and per invited address (the body's `email`): any signed-in user can make an org and
  // invite, so without the invitee's count a stranger's inbox could be mailed from many accounts and addresses.
  mailLimit: rateLimit("EMAIL", "email"),
};

export const orgRoutes = new Hono<AppEnv>()
  .use("/orgs", requireAuth)
  .use("/orgs/*", requireAuth)
  .post(
    "/orgs",
    operation({
      summary: "Create an organization",
      description:
        "The caller becomes its `owner`. `slug` is generated from the name when absent (with a random suffix when " +
        "taken); a chosen slug that is taken: 409 `slug-already-in-use`. Anonymous users: 403 `forbidden-anonymous`.",
      security: "bearer",
      answers: { 201: { description: "The organization.", schema: orgSchema } },
    }),
    jsonBody(createOrgBody),
    async (c) => {
      const auth = c.var.auth!;
      if (auth[HASURA_NAMESPACE]?.["x-hasura-user-is-anonymous"] === "true")
        throw new AppError("forbidden-anonymous");
      return c.json(await createOrg(c.var.deps, c.req.valid("json"), auth.sub), 201);
    },
  )
  .get(
    "/orgs",
    operation({
      summary: "List my organizations",
      description:
        "The caller's organizations (active memberships), oldest first, each with the caller's `role`.",
      security: "bearer",
      answers: { 200: { description: "A page of organizations.", schema: pageSchema(myOrgSchema) } },
    }),
    queryParams(pageQuery),
    async (c) => c.json(await listUserOrgs(c.var.deps, c.var.auth!.sub, c.req.valid("query"))),
  )
  .post(
    "/orgs/invitations/accept",
    operation({
      summary: "Accept an invitation",
      description:
        "Joins the organization with the invitation's role. The ticket is single use and seven days; the caller's " +
        "email must be the invited one and verified, else 403 `invitation-email-mismatch` and the ticket stays " +
        "for its addressee. Unknown, used or expired: 401 `invalid-ticket`. A member already keeps their role.",
      security: "bearer",
      answers: {
        200: { description: "The organization joined, with the caller's role.", schema: myOrgSchema },
      },
    }),
    rateLimit("BRUTE_FORCE"),
    jsonBody(acceptBody),
    async (c) => {
      const { org, role } = await acceptInvitation(c.var.deps, c.req.valid("json").ticket, c.var.auth!.sub);
      return c.json({ ...toWireOrg(org), role });
    },
  )
  .route("/", orgResourceRoutes(memberGuard));
