import type { Config } from "../config";

/** Email allow and block lists (contract §9, `AUTH_ACCESS_CONTROL_*`). Emails are compared lower-cased. */
export function isEmailAllowed(email: string, config: Config): boolean {
  const address = email.toLowerCase();
  const domain = address.slice(address.lastIndexOf("@") + 1);
  const lower = (list: string[]) => list.map((s) => s.toLowerCase());
  if (lower(config.signUp.blockedEmails).includes(address)) return false;
  if (lower(config.signUp.blockedEmailDomains).includes(domain)) return false;
  const allowedEmails = lower(config.signUp.allowedEmails);
  const allowedDomains = lower(config.signUp.allowedEmailDomains);
  if (allowedEmails.length === 0 && allowedDomains.length === 0) return true;
  return allowedEmails.includes(address) || allowedDomains.includes(domain);
}
