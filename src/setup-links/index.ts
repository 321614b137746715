/**
 * Setup links (contract operators.md §5): what the rest of the service uses. The console lists an org's links with
 * their progress, makes and revokes them (src/admin/console/). Everything else in src/setup-links/ is internal to it.
 */
export { createLink, linkUrl, listLinks, revokeLink } from "./links";
export { toWireLink, type WireSetupLink } from "./progress";
