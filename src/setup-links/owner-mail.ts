import { findUserById, toWireUser } from "../auth";
import type { SsoConnectionRow } from "../db/schema";
import type { Deps } from "../http/deps";
import { renderTemplate } from "../mail/templates";
import { findOrg, listMembers } from "../orgs";

/**
 * The mail to an organization's owners when a connection made through a setup link passed its test (contract
 * operators.md §5: "the owner is mailed"): it stays off until one of them turns it on. Each owner in their own
 * language (template `setup-connection-ready`, overridable like the others).
 */
export async function mailOwnersReady(
  deps: Deps,
  connection: SsoConnectionRow,
  email: string,
): Promise<void> {
  const { config } = deps;
  const [org, members] = await Promise.all([
    findOrg(deps, connection.orgId),
    listMembers(deps, connection.orgId, { limit: 100 }),
  ]);
  if (!org) return;
  const owners = members.items.filter((member) => member.role === "owner");
  for (const owner of owners) {
    const user = await findUserById(deps.shards, owner.userId);
    if (!user?.email || user.disabled) continue;
    const link = config.urls.client;
    const message = renderTemplate(
      config.mail.templates,
      "setup-connection-ready",
      user.locale,
      config.locales.default,
      {
        displayName: user.displayName || user.email,
        email,
        orgName: org.name,
        type: connection.type.toUpperCase(),
        connectionId: connection.id,
        locale: user.locale,
        link,
        serverUrl: config.urls.server,
        clientUrl: config.urls.client,
      },
    );
    await deps.mailer.send({
      to: user.email,
      ...message,
      about: { template: "setup-connection-ready", locale: user.locale, link, user: toWireUser(user) },
    });
  }
}
