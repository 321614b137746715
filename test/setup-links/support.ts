import { expect } from "vitest";
import { PREFIX, SERVER, type TestService } from "../helpers";

/**
 * Setup links in tests (contract operators.md §5): a link made through the owner's API, and the IT admin's browser
 * on the hosted pages: a cookie jar, same-origin form posts, redirects read one at a time.
 */

export const ORIGIN = new URL(SERVER).origin;

export async function makeLink(
  svc: TestService,
  orgId: string,
  token: string,
  body: Record<string, unknown> = { intents: ["domains", "sso", "scim"] },
) {
  const response = await svc.post(`/orgs/${orgId}/setup-links`, body, token);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: string; url: string; expiresAt: string };
}

/** One browser: its cookies, kept by name, sent back on every request (as a browser would, path `/`). */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly svc: TestService,
    readonly address = "192.0.2.10",
    readonly language = "en",
  ) {}

  private keep(response: Response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at);
      const value = pair.slice(at + 1);
      if (/max-age=0/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  private headers(extra: Record<string, string> = {}) {
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    return {
      "accept-language": this.language,
      "cf-connecting-ip": this.address,
      ...(cookie ? { cookie } : {}),
      ...extra,
    };
  }

  async get(path: string) {
    const url = path.startsWith("http") ? path : `${SERVER}${PREFIX}${path}`;
    return this.keep(await this.svc.request("GET", url, { headers: this.headers() }));
  }

  /** A form post from the page itself (`origin`: another site's post). */
  async post(path: string, form: Record<string, string>, origin = ORIGIN) {
    const url = path.startsWith("http") ? path : `${SERVER}${PREFIX}${path}`;
    return this.keep(
      await this.svc.request("POST", url, {
        body: new URLSearchParams(form).toString(),
        headers: this.headers({ "content-type": "application/x-www-form-urlencoded", origin }),
      }),
    );
  }

  /** Opens the link: the overview, its token moved into the cookie. */
  async open(url: string) {
    const opened = await this.get(url);
    expect(opened.status, await opened.clone().text()).toBe(303);
    expect(opened.headers.get("location")).toBe(`${PREFIX}/setup`);
    return opened;
  }
}

export const locationOf = (response: Response) => new URL(response.headers.get("location")!, SERVER);

/** The value shown after a label on a page (`<dt>label</dt><dd><code class="copy">value</code></dd>`). */
export function shownValue(page: string, label: string): string {
  const escaped = label.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/&/g, "&amp;");
  const match = new RegExp(`<dt>${escaped}</dt><dd><code class="copy">([^<]*)</code>`).exec(page);
  if (!match) throw new Error(`no value for ${label} in the page`);
  return match[1]!.replace(/&amp;/g, "&");
}
