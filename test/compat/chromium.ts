// Which Chromium the browser tests drive: Debian's, installed by `.ci/run` (packages chromium-headless-shell and
// chromium). A test that needs neither a window nor the browser's own UI drives the headless shell, Chromium's
// rendering and protocol without the browser around them: the same pages, script, CSP, WebAuthn virtual
// authenticators and axe results, at 40 % less CPU than the full browser in its headless mode (browser-languages.test.ts
// alone on the 2-core machine: 51 CPU-s of Chromium and 82 s with the full browser, 31 CPU-s and 64 s with the shell;
// docs/decisions.md, "Test cost: the headless shell"). Two files drive the full browser: FedCM's dialogs are the
// browser's, not the page's; and setup-link.test.ts's IdP, answered by `page.route` at an https host that does not
// resolve, was not intercepted by the shell when the service's redirect led there (ERR_NAME_NOT_RESOLVED; seen, not
// explained). Without the package a file is skipped locally; CI installs both and runs all.
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

export const HEADLESS_SHELL = "/usr/bin/chromium-headless-shell";
export const FULL_CHROMIUM = "/usr/bin/chromium";

/** Whether a file driving `executable` runs here: always in CI, which installs it; locally when it is installed. */
export const canRun = (executable: string): boolean => existsSync(executable) || process.env.CI === "true";

/** Chromium at `executable`, headless, as every browser test launches it (`args`: a test's own switches). */
export const launch = (executable: string, args: string[] = []): Promise<Browser> =>
  chromium.launch({ executablePath: executable, headless: true, args });
