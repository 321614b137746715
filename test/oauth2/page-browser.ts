// A browser for the built-in page, through HTTP: a cookie jar, same-origin form posts, the sign-in step.
import { expect } from "vitest";
import { PASSWORD, SERVER, type TestService } from "../helpers";
import { form, ISSUER, location } from "./support";

export const ORIGIN = { origin: SERVER };

/** A browser's cookie jar for the page: what the service set, sent back on every request. */
export class Browser {
  readonly jar = new Map<string, string>();
  constructor(readonly svc: TestService) {}
  get cookie(): string {
    return [...this.jar].map(([name, value]) => `${name}=${value}`).join("; ");
  }
  /** Whether the page's session cookie is set: the browser is signed in to the page. */
  get signedIn(): boolean {
    return this.jar.has("oauth2_session");
  }
  async get(url: string): Promise<Response> {
    return this.remember(
      await this.svc.request("GET", url.replace(ISSUER, ""), { headers: { cookie: this.cookie } }),
    );
  }
  async post(
    path: string,
    values: Record<string, string>,
    headers: Record<string, string> = ORIGIN,
  ): Promise<Response> {
    return this.remember(
      await this.svc.request("POST", path, {
        body: form(values),
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: this.cookie, ...headers },
      }),
    );
  }
  private remember(response: Response): Response {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
      if (!value || /Max-Age=0/i.test(line)) this.jar.delete(name);
      else this.jar.set(name, value);
    }
    return response;
  }
}

export async function signIn(browser: Browser, requestId: string, email: string) {
  const response = await browser.post("/oauth2/interaction/sign-in", {
    request_id: requestId,
    email,
    password: PASSWORD,
  });
  expect(response.status).toBe(303);
  return browser.get(location(response).toString());
}
