// axe-core (a well-kept accessibility engine) in a Chromium page: the WCAG 2.1 A/AA rules, and a test fails on any
// serious or critical violation, naming the rule and the elements.
import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { expect } from "vitest";
import type { PageGlobals } from "./page-globals";

const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/**
 * axe's 650 KB served from loopback, cacheable: each page loads it by URL, which Chromium fetches once per context
 * and compiles from its code cache after that, where a script tag with the source inline sent the whole text over
 * the DevTools protocol and compiled it afresh for every page (about 100 ms a page, a few hundred pages a run).
 */
const axeServer = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "text/javascript", "cache-control": "max-age=3600" });
  response.end(AXE_SOURCE);
});
const axeUrl = new Promise<string>((resolve) =>
  axeServer.listen(0, "127.0.0.1", () =>
    resolve(`http://127.0.0.1:${(axeServer.address() as AddressInfo).port}/axe.min.js`),
  ),
);
// The compat files run one after another in one process (vitest.config.ts, `isolate: false`), which loads this module
// once: the server serves every file that uses axe and ends with the process, which it never holds open.
axeServer.unref();

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * Runs axe on the page as it is. The page's CSP forbids our script, so the page must come from a context opened
 * with `bypassCSP` (the CSP itself is checked by the tests that use the pages without it).
 */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  await page.addScriptTag({ url: await axeUrl });
  const violations = (await page.evaluate(async () => {
    // Runs in the page: only a type is borrowed from page-globals.ts.
    const { axe, document } = globalThis as unknown as PageGlobals;
    const result = await axe.run(document, {
      runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
      resultTypes: ["violations"],
    });
    return result.violations;
  })) as Violation[];
  const serious = violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) =>
        `${violation.id} (${violation.impact}): ${violation.help} — ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );
  expect(serious, `${name}: serious or critical accessibility violations`).toEqual([]);
}

/** Whether the page fits its viewport's width (no sideways scrolling). */
export async function expectNoSidewaysScroll(page: Page, name: string): Promise<void> {
  const [scrollWidth, innerWidth] = await page.evaluate(() => {
    const { document, innerWidth } = globalThis as unknown as PageGlobals;
    return [document.documentElement.scrollWidth, innerWidth];
  });
  expect(scrollWidth, `${name} is ${scrollWidth}px wide in a ${innerWidth}px window`).toBeLessThanOrEqual(
    innerWidth,
  );
}
