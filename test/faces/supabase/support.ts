import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { NO_VERIFICATION, SERVER, service, type TestService } from "../../helpers";

/** The keys the face's tests configure (shapes as `npm start` generates them). */
export const PUBLISHABLE_KEY = "sb_publishable_test0123456789abcdef";
export const SECRET_KEY = "sb_secret_test0123456789abcdef0123";
export const FACE = `${SERVER}/supabase`;

export function supabaseService(overrides: Record<string, unknown> = {}): TestService {
  return service({
    AUTH_SUPABASE_API_ENABLED: "true",
    AUTH_SUPABASE_PUBLISHABLE_KEYS: PUBLISHABLE_KEY,
    AUTH_SUPABASE_SECRET_KEYS: SECRET_KEY,
    ...NO_VERIFICATION,
    ...overrides,
  });
}

/** Every request of the real client goes to the Worker under test, as it would over the network. */
export function fetchThrough(svc: TestService): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.text();
    return svc.request(request.method, request.url, { headers: Object.fromEntries(request.headers), body });
  };
}

/** A real `@supabase/supabase-js` client pointed at the face, as an app creates it, with no session kept anywhere. */
export function supabaseClient(
  svc: TestService,
  key = PUBLISHABLE_KEY,
  headers: Record<string, string> = {},
): SupabaseClient {
  return createClient(FACE, key, {
    global: { fetch: fetchThrough(svc), headers },
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
}
