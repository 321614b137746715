import { createServerClient } from "@supabase/ssr";
import { getCookie, setCookie } from "hono/cookie";

/**
 * One supabase-js client per request, its session kept in the request's cookies by @supabase/ssr: the same code an
 * app written for Supabase has, with the URL of the service's face instead of the project's.
 */
export function supabaseFor(c, settings) {
  return createServerClient(settings.supabaseUrl, settings.supabaseKey, {
    cookies: {
      getAll: () => Object.entries(getCookie(c)).map(([name, value]) => ({ name, value })),
      setAll: (cookies) => {
        for (const { name, value, options } of cookies) setCookie(c, name, value, toHonoOptions(options));
      },
    },
  });
}

/** @supabase/ssr speaks the `cookie` package's option names; Hono's setCookie has its own. */
function toHonoOptions(options = {}) {
  return {
    path: options.path ?? "/",
    maxAge: options.maxAge,
    httpOnly: options.httpOnly ?? true,
    secure: options.secure,
    sameSite: options.sameSite === "strict" ? "Strict" : options.sameSite === "none" ? "None" : "Lax",
  };
}
