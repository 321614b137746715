import { beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, uniqueEmail } from "../../helpers";
import { STORAGE_FACE, uniqueBucket } from "./storage-support";
import { FACE, PUBLISHABLE_KEY, SECRET_KEY, supabaseClient, supabaseService } from "./support";

/**
 * The face's answer headers: CORS for supabase-js in a browser on the app's origin (contract supabase.md §1), and
 * GoTrue's `Cache-Control: no-store` unless a route says otherwise. They are set once, on the answer the route gave
 * (src/http/answer-headers.ts), where Hono's `cors()` and `c.header()` after the route each built a new `Response`;
 * this pins that every kind of answer keeps them: a JSON answer, an error, a redirect (whose headers the runtime
 * makes immutable), a preflight, a body-less 204, a stored file's stream, Storage's own answers, the face's 404.
 */

const svc = supabaseService({
  AUTH_PROVIDER_GITHUB_ENABLED: "true",
  AUTH_PROVIDER_GITHUB_CLIENT_ID: "github-client",
  AUTH_PROVIDER_GITHUB_CLIENT_SECRET: "github-secret",
});
const APP = "http://localhost:3000";
const EXPOSED =
  "x-sb-error-code,X-Supabase-Api-Version,X-Request-Id,ETag,Content-Range,Content-Disposition,Last-Modified,Location," +
  "Tus-Resumable,Upload-Offset,Upload-Length,content-range,content-location,preference-applied,location";
const ALLOWED_HEADERS =
  "authorization,apikey,content-type,x-client-info,x-supabase-api-version,x-upsert,x-metadata,cache-control," +
  "content-encoding,tus-resumable,upload-length,upload-metadata,upload-offset,prefer,accept-profile,content-profile," +
  "range,range-unit,x-region";
const SERVICE = { apikey: SECRET_KEY, authorization: `Bearer ${SECRET_KEY}` };

/** The headers this file is about, as a plain object (absent ones absent). */
const answerHeaders = (response: Response) =>
  Object.fromEntries(
    [...response.headers].filter(([name]) => /^(access-control-|vary$|cache-control$)/.test(name)),
  );

/** What CORS adds for a request from `origin` (none: no Origin header): the origin only when it is the app's. */
const corsFor = (origin: string | undefined) => ({
  ...(origin === APP ? { "access-control-allow-origin": APP } : {}),
  "access-control-expose-headers": EXPOSED,
  vary: "Origin",
});

let token = "";
let bucket = "";
beforeAll(async () => {
  const { data, error } = await supabaseClient(svc).auth.signUp({
    email: uniqueEmail("headers"),
    password: PASSWORD,
  });
  if (error || !data.session) throw new Error(`sign-up failed: ${error?.message}`);
  token = data.session.access_token;
  bucket = uniqueBucket("headers");
  const made = await svc.request("POST", `${STORAGE_FACE}/bucket`, {
    headers: SERVICE,
    json: { id: bucket, name: bucket },
  });
  const stored = await svc.request("POST", `${STORAGE_FACE}/object/${bucket}/note.txt`, {
    headers: { ...SERVICE, "content-type": "text/plain" },
    body: "hello",
  });
  if (made.status !== 200 || stored.status !== 200)
    throw new Error(`no file: ${made.status} ${stored.status}`);
});

type Case = {
  name: string;
  method?: string;
  path: string;
  headers: () => Record<string, string>;
  status: number;
  /** `Cache-Control` of the answer, undefined: none. */
  cacheControl?: string;
  /** Storage refuses a secret key from a browser (it says where it comes from): then this answer instead. */
  fromBrowser?: { status: number; cacheControl?: string };
};

const CASES: Case[] = [
  {
    name: "getUser's JSON",
    path: "/auth/v1/user",
    headers: () => ({ apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` }),
    status: 200,
    cacheControl: "no-store",
  },
  {
    name: "GoTrue's error",
    path: "/auth/v1/user",
    headers: () => ({}),
    status: 401,
    cacheControl: "no-store",
  },
  {
    name: "an open path",
    path: "/auth/v1/health",
    headers: () => ({}),
    status: 200,
    cacheControl: "no-store",
  },
  {
    name: "a redirect",
    path: "/auth/v1/authorize?provider=github",
    headers: () => ({ apikey: PUBLISHABLE_KEY }),
    status: 302,
    cacheControl: "no-store",
  },
  {
    name: "a body-less 204",
    method: "POST",
    path: "/auth/v1/logout?scope=others",
    headers: () => ({ apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` }),
    status: 204,
    cacheControl: "no-store",
  },
  {
    name: "Storage's JSON",
    path: "/storage/v1/bucket",
    headers: () => SERVICE,
    status: 200,
    fromBrowser: { status: 401, cacheControl: "no-store" },
  },
  {
    name: "a stored file",
    path: `/storage/v1/object/authenticated/BUCKET/note.txt`,
    headers: () => SERVICE,
    status: 200,
    cacheControl: "private, max-age=3600",
    fromBrowser: { status: 401, cacheControl: "no-store" },
  },
  {
    name: "the face's 404",
    path: "/nothing-here",
    headers: () => ({ apikey: PUBLISHABLE_KEY }),
    status: 404,
    cacheControl: "no-store",
  },
];

describe("the Supabase face's answer headers", () => {
  for (const origin of [APP, "https://elsewhere.example", undefined]) {
    it.each(CASES)(`$name, from ${origin ?? "no origin"}`, async (one) => {
      const response = await svc.request(
        one.method ?? "GET",
        `${FACE}${one.path.replace("BUCKET", bucket)}`,
        {
          headers: { ...one.headers(), ...(origin ? { origin } : {}) },
        },
      );
      const expected = (origin && one.fromBrowser) || one;
      expect(response.status).toBe(expected.status);
      expect(answerHeaders(response)).toEqual({
        ...corsFor(origin),
        ...(expected.cacheControl ? { "cache-control": expected.cacheControl } : {}),
      });
    });

    it(`a preflight, from ${origin ?? "no origin"}`, async () => {
      const response = await svc.request("OPTIONS", `${FACE}/auth/v1/token`, {
        headers: {
          ...(origin ? { origin } : {}),
          "access-control-request-method": "POST",
          "access-control-request-headers": "apikey,content-type",
        },
      });
      expect(response.status).toBe(204);
      expect(answerHeaders(response)).toEqual({
        ...corsFor(origin),
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-allow-methods": "GET,HEAD,PUT,POST,DELETE,PATCH,QUERY",
        "access-control-max-age": "600",
        vary: "Origin, Access-Control-Request-Headers",
      });
    });
  }
});
