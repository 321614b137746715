// A browser for the built-in page, through HTTP: a cookie jar, same-origin form posts, the sign-in step.
import { expect } from "vitest";
import { PASSWORD, SERVER, type TestService } from "../helpers";
import { form, ISSUER, location, REDIRECT_URI } from "./support";

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

/** An authorization request from the browser (with its page cookie): what `prompt=none` answers depends on it. */
export const authorizeIn = (browser: Browser, client: { clientId: string }, params: Record<string, string>) =>
  browser.get(
    `/oauth2/authorize?${form({ client_id: client.clientId, redirect_uri: REDIRECT_URI, response_type: "code", state: "st-1", ...params })}`,
  );

/** Allows the consent screen the browser is on; returns where the browser is sent. */
export async function allowConsent(browser: Browser, requestId: string): Promise<URL> {
  const allowed = await browser.post("/oauth2/interaction/consent", {
    request_id: requestId,
    decision: "allow",
  });
  expect(allowed.status).toBe(303);
  return location(allowed);
}
