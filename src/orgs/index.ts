/**
 * Organizations (contract organizations.md §1) as the rest of the service uses them: enterprise connections
 * (src/sso/), SCIM (src/scim/), the console, the OAuth2 consent page and the
 * hosted invitation page. The user routes mount under the auth API, the admin routes under `/admin`. Everything else in src/orgs/ is internal to it.
 */
export { orgAdminRoutes } from "./admin-routes";
export { INVITATION_PAGE_PATH } from "./invitation-mail";
export {
  acceptInvitation,
  acceptInvitationByHash,
  createInvitation,
  deleteInvitation,
  findPendingInvitation,
  INVITATION_LIFETIME_MS,
  listInvitations,
  type PendingInvitation,
} from "./invitations";
export {
  addMember,
  checkRole,
  findMember,
  listMembers,
  MANAGERS,
  type NewMember,
  OWNERS,
  removeMember,
  requireOrgRole,
  revokeOrgSessions,
  setMemberRole,
} from "./members";
export {
  createOrg,
  deleteOrg,
  findOrg,
  findOrgBySlug,
  getOrg,
  listOrgs,
  listUserOrgs,
  type NewOrg,
  slugFromName,
  updateOrg,
} from "./organizations";
export { orgRoutes } from "./routes";
export {
  invitationSchema,
  memberSchema,
  myOrgSchema,
  orgSchema,
  type WireMember,
  type WireOrg,
} from "./wire";
