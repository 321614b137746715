import { disposableEmailBlocklistSet } from "disposable-email-domains-js";

/**
 * Disposable ("burner") mail domains, from the maintained list of `disposable-email-domains-js` (pinned in
 * package.json; a new version is a new list). The set is built once per isolate: the package's own
 * `isDisposableEmailDomain` builds it again on every call.
 */
let domains: Set<string> | undefined;

/** Whether `email`'s domain, or a domain it is under (`x.mailinator.com`), is on the list. */
export function isDisposableEmail(email: string | null | undefined): boolean {
  const at = email?.lastIndexOf("@") ?? -1;
  if (!email || at < 0) return false;
  domains ??= disposableEmailBlocklistSet();
  const labels = email
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, "")
    .split(".");
  for (let i = 0; i < labels.length - 1; i++) {
    if (domains.has(labels.slice(i).join("."))) return true;
  }
  return false;
}
