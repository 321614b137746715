import type { AuthClient } from "./client.js";
import { EdgeAuthError, unwrap } from "./errors.js";
import type { AuthServiceBinding } from "./service.js";

/**
 * The request as the service needs it to authenticate: method, URL and headers, no body. A `Request` sent over RPC
 * takes its body stream with it, and the app's handler, which runs after the guard, must still read it.
 */
function withoutBody(request: Request): Request {
  return new Request(request.url, { method: request.method, headers: request.headers });
}

/** `c.var.auth` on Cloudflare: each call one RPC to the service's `AuthService`, its error values thrown as typed errors. */
export function bindingClient(binding: AuthServiceBinding): AuthClient {
  return {
    mode: "binding",
    async authenticate(request, options) {
      const found = unwrap(
        await binding.authenticate(withoutBody(request), { live: options?.live === true }),
      );
      return found ? { ...found, source: "binding" } : null;
    },
    async verifyToken(token, options) {
      return unwrap(await binding.verifyToken(token, options));
    },
    async check(request) {
      return unwrap(await binding.check(request));
    },
    async checkMany(requests, options) {
      return unwrap(await binding.checkMany(requests, options));
    },
  };
}

/** The binding named in `auth({ binding })`, checked on first use: a missing one is the app's configuration error. */
export function bindingOf(env: unknown, name: string): AuthServiceBinding {
  const binding = (env as Record<string, unknown> | undefined)?.[name] as AuthServiceBinding | undefined;
  if (typeof binding?.authenticate !== "function") {
    throw new EdgeAuthError(
      "binding-missing",
      `@edge-auth/hono: no service binding "${name}" to the service's AuthService in this Worker's env ` +
        `([[services]] binding = "${name}", entrypoint = "AuthService")`,
      { status: 500 },
    );
  }
  return binding;
}
