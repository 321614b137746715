import { env } from "cloudflare:test";
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { PASSWORD, SERVER, type TestService, uniqueEmail } from "../../helpers";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseService } from "./support";

/**
 * The face's Storage driven by the real supabase-js: each request goes to the Worker under test with its body as
 * bytes (files are binary; support.ts's fetch reads bodies as text, which is enough for GoTrue's JSON).
 */
export function binaryFetch(svc: TestService): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body =
      request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    return svc.request(request.method, request.url, { headers: Object.fromEntries(request.headers), body });
  };
}

export function storageClient(svc: TestService, key = PUBLISHABLE_KEY, headers: Record<string, string> = {}) {
  return createClient(FACE, key, {
    global: { fetch: binaryFetch(svc), headers },
    auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
  });
}

/** A client signed in as a new user (its storage calls carry the user's token), with the user's id. */
export async function signedInClient(svc: TestService): Promise<{ client: SupabaseClient; userId: string }> {
  const client = storageClient(svc);
  const { data, error } = await client.auth.signUp({ email: uniqueEmail("st"), password: PASSWORD });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  return { client, userId: data.user!.id };
}

const ADMIN = { "x-hasura-admin-secret": String(env.AUTH_ADMIN_SECRET) };

/** Sets a bucket's rules through the Nhost face's admin API (Storage's policies are bucket rules here). */
export async function setRules(svc: TestService, bucketId: string, rules: Record<string, unknown>) {
  const response = await svc.request("PATCH", `${SERVER}/storage/v1/buckets/${bucketId}`, {
    headers: ADMIN,
    json: { rules },
  });
  if (response.status !== 200) throw new Error(`rules not set: ${response.status} ${await response.text()}`);
}

export const uniqueBucket = (tag = "b") => `${tag}-${crypto.randomUUID().slice(0, 8)}`;

/** A raw request to the face's Storage (for what storage-js does not expose: headers, statuses, raw bodies). */
export const STORAGE_FACE = `${FACE}/storage/v1`;

/**
 * A new bucket of the face's Storage (objects addressed by path) that signed-in users upload to and read their own in,
 * made with the secret key (`tag` starts its name).
 */
export async function userBucket(tag: string): Promise<string> {
  const id = uniqueBucket(tag);
  const made = await supabaseService().request("POST", `${STORAGE_FACE}/bucket`, {
    headers: { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` },
    json: { id, name: id },
  });
  if (made.status !== 200) throw new Error(`bucket not made: ${made.status} ${await made.text()}`);
  await setRules(supabaseService(), id, {
    upload: "authenticated",
    read: "owner",
    update: "owner",
    delete: "owner",
  });
  return id;
}
