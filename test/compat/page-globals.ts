// The browser globals that `page.evaluate` callbacks run against. The compat tests are type-checked without the DOM
// library (they run in Node), so the few names those callbacks use are declared here, loosely. A callback is sent to
// the page as source text: it casts `globalThis` itself (`globalThis as unknown as PageGlobals`), calling nothing of ours.
interface PageElement {
  id: string;
  textContent: string | null;
  type: string;
  name: string;
  value: string;
  append(child: PageElement): void;
  removeAttribute(name: string): void;
  setAttribute(name: string, value: string): void;
}

export interface PageGlobals {
  document: {
    activeElement: PageElement | null;
    documentElement: { scrollWidth: number };
    createElement(tag: string): PageElement;
    querySelector(selector: string): PageElement | null;
    querySelectorAll(selector: string): Iterable<PageElement>;
  };
  innerWidth: number;
  axe: {
    run(context: unknown, options: object): Promise<{ violations: unknown[] }>;
  };
}
