import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { expect, it } from "vitest";
import worker from "../src/index";
import { createApp } from "../src/runtime/app";
import { serviceConfig } from "../src/runtime/config";

const PUB = "sb_publishable_test0123456789abcdef";
const SEC = "sb_secret_test0123456789abcdef0123";
const ENV: Record<string, unknown> = {
  ...env,
  AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED: "false",
  AUTH_SUPABASE_API_ENABLED: "true",
  AUTH_SUPABASE_PUBLISHABLE_KEYS: PUB,
  AUTH_SUPABASE_SECRET_KEYS: SEC,
  AUTH_OAUTH2_PROVIDER_ENABLED: "true",
  AUTH_MFA_ENABLED: "true",
  AUTH_WEBAUTHN_ENABLED: "true",
  AUTH_ANONYMOUS_USERS_ENABLED: "true",
  AUTH_EMAIL_PASSWORDLESS_ENABLED: "true",
  AUTH_OTP_EMAIL_ENABLED: "true",
  AUTH_SMS_PASSWORDLESS_ENABLED: "true",
  AUTH_DEV_SMS: "true",
  AUTH_IMPERSONATION_ENABLED: "true",
  AUTH_TOKEN_VAULT_ENABLED: "true",
  AUTH_RATE_LIMIT_ENABLE: "false",
};
const BASE = "http://localhost:8787";
const ADMIN_SECRET = String(env.AUTH_ADMIN_SECRET);

interface Finding {
  what: string;
  status: number;
  body: string;
}
export const findings: Finding[] = [];

const origLog = console.log;
console.log = (...a: unknown[]) => {
  if (typeof a[0] === "string" && a[0].startsWith('{"level":"info"')) return;
  origLog(...a);
};
const origWarn = console.warn;
console.warn = (...a: unknown[]) => {
  if (typeof a[0] === "string" && a[0].startsWith('{"level":"warn"')) return;
  origWarn(...a);
};
let addr = 1;
function uniqueAddr() {
  addr++;
  return `10.${(addr >> 16) & 255}.${(addr >> 8) & 255}.${addr & 255}`;
}

export async function send(method: string, url: string, init: { headers?: Record<string, string>; body?: BodyInit } = {}) {
  const headers = new Headers(init.headers);
  if (!headers.has("cf-connecting-ip")) headers.set("cf-connecting-ip", uniqueAddr());
  const ctx = createExecutionContext();
  const req = new Request(url.startsWith("http") ? url : BASE + url, {
    method,
    headers,
    body: method === "GET" || method === "HEAD" ? undefined : init.body,
  });
  const run = (async () => {
    const r = await worker.fetch!(req, ENV as never, ctx);
    const text = method === "HEAD" ? "" : await r.text();
    await waitOnExecutionContext(ctx);
    return { r, text };
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"hang">((resolve) => {
    timer = setTimeout(() => resolve("hang"), 10_000);
  });
  const out = await Promise.race([run, timeout]);
  clearTimeout(timer);
  return out;
}

const STACK = /\bat \S+ \(|\bat \S+:\d+|ZodError|TypeError|ReferenceError|RangeError|SyntaxError|D1_|SQLITE|Cannot read prop|undefined is not|is not a function|is not defined|Unexpected token|\bstack\b/i;

function shapeOk(path: string, status: number, ctype: string, text: string): string | null {
  if (status < 400) return null;
  if (!/json/.test(ctype)) {
    if (status === 405 || status === 404 || /html/.test(ctype)) return null; // pages
    if (text === "" ) return null;
    return `non-json error (${ctype})`;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return "unparseable json";
  }
  const b = body as Record<string, unknown>;
  if (!b || typeof b !== "object" || Array.isArray(b)) return "non-object error";
  const keys = Object.keys(b).sort().join(",");
  if (path.startsWith("/supabase/auth/")) {
    if (typeof b.code === "number" && typeof b.error_code === "string" && typeof b.msg === "string") return null;
    return `gotrue shape? ${keys}`;
  }
  if (path.startsWith("/supabase/storage/")) {
    if ("statusCode" in b && "error" in b && "message" in b) return null;
    return `sb storage shape? ${keys}`;
  }
  if (path.startsWith("/supabase/")) return null;
  if (typeof b.status === "number" && typeof b.message === "string" && typeof b.error === "string") return null;
  if (typeof b.error === "string" && (b.error_description === undefined || typeof b.error_description === "string"))
    return null; // oauth2
  if (Array.isArray(b.schemas)) return null; // scim
  if (b.error && typeof b.error === "object" && "message" in (b.error as object)) return null; // nhost storage
  return `shape? ${keys}`;
}

export function judge(what: string, path: string, out: Awaited<ReturnType<typeof send>>) {
  if (out === "hang") {
    findings.push({ what, status: -1, body: "HANG > 10s" });
    return;
  }
  const { r, text } = out;
  const ctype = r.headers.get("content-type") ?? "";
  const bad: string[] = [];
  if (r.status >= 500) bad.push("5xx");
  if (r.status >= 400 && STACK.test(text)) bad.push("stack/internal");
  const s = shapeOk(path, r.status, ctype, text);
  if (s) bad.push(s);
  if (bad.length) findings.push({ what: `${bad.join("|")} :: ${what}`, status: r.status, body: text.slice(0, 300) });
}

export function routes(): [string, string][] {
  const config = serviceConfig(ENV as never);
  const app = createApp(config);
  const seen = new Set<string>();
  const out: [string, string][] = [];
  for (const r of app.routes) {
    if (r.method === "ALL" && /\*$/.test(r.path) && !/\/\*$/.test(r.path) === false) {
      // middleware-ish
    }
    const key = `${r.method} ${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push([r.method, r.path]);
  }
  return out;
}

export function fill(path: string, value: string): string {
  return path.replace(/:[A-Za-z_]+(\{[^}]*\})?\??/g, value).replace(/\*/g, value);
}

const FIELDS = [
  "email", "password", "refreshToken", "refresh_token", "token", "code", "id", "name", "phone", "redirect_to",
  "redirectTo", "options", "data", "type", "ticket", "otp", "factorId", "factor_id", "challenge_id", "credential",
  "newPassword", "displayName", "metadata", "client_id", "grant_type", "scope", "state", "nonce", "domain",
  "provider", "public", "bucketId", "bucket_id", "prefix", "limit", "offset", "roles", "defaultRole", "locale",
  "userId", "user_id", "signInMethod", "response", "clientDataJSON", "attestationObject", "url", "key", "value",
];
const objOf = (v: unknown) => JSON.stringify(Object.fromEntries(FIELDS.map((f) => [f, v])));
const deepObj = `${'{"a":'.repeat(3000)}1${"}".repeat(3000)}`;
const deepArr = `${"[".repeat(3000)}${"]".repeat(3000)}`;

export const BODIES: [string, string, string | undefined][] = [
  ["no body", "", undefined],
  ["malformed json", '{"email": ', "application/json"],
  ["array", "[]", "application/json"],
  ["number", "42", "application/json"],
  ["string", '"s"', "application/json"],
  ["null", "null", "application/json"],
  ["true", "true", "application/json"],
  ["deep obj", deepObj, "application/json"],
  ["deep arr", deepArr, "application/json"],
  ["NUL strings", objOf("a\u0000b@example.com"), "application/json"],
  ["surrogates", objOf("\\ud800x\\udfff").replace(/\\\\/g, "\\"), "application/json"],
  ["numbers", objOf(1e308), "application/json"],
  ["neg numbers", objOf(-1), "application/json"],
  ["objects", objOf({ a: 1 }), "application/json"],
  ["arrays", objOf(["a", 1]), "application/json"],
  ["nulls", objOf(null), "application/json"],
  ["bools", objOf(true), "application/json"],
  ["long strings", objOf("x".repeat(3000)), "application/json"],
  ["proto", '{"__proto__":{"a":1},"constructor":{"prototype":{"x":1}}}', "application/json"],
  ["form", FIELDS.map((f) => `${f}=%ZZ%00`).join("&"), "application/x-www-form-urlencoded"],
  ["form ok", FIELDS.map((f) => `${f}=x`).join("&"), "application/x-www-form-urlencoded"],
  ["text", "hello", "text/plain"],
  ["json no ctype", objOf("x"), undefined],
  ["multipart junk", "--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nxx\r\n--b--", "multipart/form-data; boundary=b"],
  ["multipart no boundary", "junk", "multipart/form-data"],
  ["bad ctype", "{}", "application/json; charset=utf-99"],
  ["1MB", JSON.stringify({ email: "x".repeat(1_000_000) }), "application/json"],
];

export const PATHS = [
  "not-a-uuid",
  "%ZZ",
  "%00",
  "x".repeat(5000),
  "%E0%A4%A",
  "..%2F..%2Fetc",
  "%C0%AF",
  "00000000-0000-0000-0000-000000000000",
  "%F0%9F%98%80%ED%A0%80",
  "a%2Fb",
];

export const QUERIES = [
  "?redirectTo=%ZZ&redirectTo=x&redirect_to=%00&limit=-1&limit=abc&offset=1e400&page=%00&per_page=99999999999999999999&cursor=%ZZ&type=%5B%5D&id[]=1&code=%00&token=%00&state=&grant_type=%ZZ&q=%ZZ&filter=%22&sortBy=%00&before=x&after=x",
  "?limit=1e400&offset=-5&page=-1&per_page=0&width=-1&height=abc&q=80000&quality=-1&format=%00&download=%ZZ&t=%ZZ&token=a.b.c&expires=-1&signature=%ZZ",
  `?${"a=1&".repeat(2000)}`,
];

export const AUTHS: [string, Record<string, string>][] = [
  ["bearer junk", { authorization: "Bearer junk" }],
  ["bearer empty", { authorization: "Bearer " }],
  ["basic junk", { authorization: "Basic %%%" }],
  ["basic colon", { authorization: `Basic ${btoa(":")}` }],
  ["alg none", { authorization: `Bearer ${btoa('{"alg":"none","typ":"JWT"}').replace(/=/g, "")}.${btoa('{"sub":"00000000-0000-0000-0000-000000000000","exp":9999999999,"role":"service_role"}').replace(/=/g, "")}.` }],
  ["huge header jwt", { authorization: `Bearer ${btoa(JSON.stringify({ alg: "RS256", kid: "x".repeat(60_000) })).replace(/=/g, "")}.e30.sig` }],
  ["bad b64 jwt", { authorization: "Bearer %%%.***.!!!" }],
  ["jwt header not json", { authorization: `Bearer ${btoa("nope")}.${btoa("nope")}.x` }],
  ["jwt array", { authorization: `Bearer ${btoa("[]")}.${btoa("[]")}.x` }],
  ["dpop junk", { authorization: "DPoP junk", dpop: "junk" }],
  ["cookies junk", { cookie: "nhostSession=%ZZ; __Host-session=%00; sid=x; nhostRefreshToken=%E0%A4%A; a=b; =; ;;" }],
  ["cookies long", { cookie: `x=${"y".repeat(8000)}` }],
  ["admin secret junk", { "x-hasura-admin-secret": "wrong" }],
  ["apikey junk", { apikey: "junk", authorization: "Bearer junk" }],
  ["apikey pub + bad bearer", { apikey: PUB, authorization: "Bearer a.b.c" }],
  ["apikey pub + alg none", { apikey: PUB, authorization: `Bearer ${btoa('{"alg":"none"}').replace(/=/g, "")}.${btoa('{"sub":"x","role":"service_role"}').replace(/=/g, "")}.` }],
  ["apikey sec with origin", { apikey: SEC, origin: "http://evil.example" }],
];

export function printFindings(tag: string) {
  const groups = new Map<string, Finding[]>();
  for (const f of findings) {
    const k = `${f.status} ${f.what.split("::")[0]} ${f.body.slice(0, 80)}`;
    const g = groups.get(k) ?? [];
    g.push(f);
    groups.set(k, g);
  }
  console.log(`=== ${tag}: ${findings.length} findings in ${groups.size} groups`);
  for (const [k, g] of groups) {
    console.log(`--- [${g.length}] ${k}\n   e.g. ${g.slice(0, 4).map((f) => f.what).join("\n        ")}\n   body: ${g[0]!.body}`);
  }
}


async function nhostUser(): Promise<{ token: string; id: string }> {
  const email = `fz-${crypto.randomUUID().slice(0, 8)}@example.com`;
  const out = await send("POST", "/auth/v1/signup/email-password", {
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery" }),
  });
  if (out === "hang") throw new Error("hang");
  const s = (JSON.parse(out.text) as { session: { accessToken: string; user: { id: string } } }).session;
  return { token: s.accessToken, id: s.user.id };
}

const VALUES: [string, unknown][] = [
  ["empty", ""],
  ["600 chars", "x".repeat(600)],
  ["6000 chars", "y".repeat(6000)],
  ["NUL", "a\u0000b"],
  ["lone surrogate", "a\ud800b"],
  ["pct junk", "%ZZ%00"],
  ["dots", "../../x"],
  ["emoji", "\u{1F4A9}".repeat(300)],
  ["1e308", 1e308],
  ["-1", -1],
  ["0.5", 0.5],
  ["2^63", 2 ** 63],
  ["huge int", 9007199254740993],
  ["true", true],
  ["null", null],
  ["[]", []],
  ["{}", {}],
  ["bad date", "2026-13-45T99:99:99Z"],
  ["js url", "javascript:alert(1)"],
  ["broken url", "http://[::1"],
  ["array of junk", ["\u0000", 1, null, {}]],
  ["bad email", "a@b@c"],
  ["unicode email", "\u00e9\u00e9@\u00e9\u00e9.example"],
];

interface Op { method: string; path: string; op: { parameters?: { name: string; in: string; schema?: { examples?: unknown[]; example?: unknown } ; example?: unknown }[]; requestBody?: { content: Record<string, { example?: unknown }> } } }

async function docOps(prefix: string): Promise<Op[]> {
  const out = await send("GET", `${prefix}/openapi.json`);
  if (out === "hang") throw new Error("hang");
  const doc = JSON.parse(out.text) as { paths: Record<string, Record<string, Op["op"]>> };
  const ops: Op[] = [];
  for (const [p, item] of Object.entries(doc.paths))
    for (const [m, op] of Object.entries(item)) ops.push({ method: m.toUpperCase(), path: prefix + p, op });
  return ops;
}

function freshen(v: unknown): unknown {
  if (typeof v === "string" && /@example\.com$/.test(v)) return `fz-${crypto.randomUUID().slice(0, 8)}@example.com`;
  if (Array.isArray(v)) return v.map(freshen);
  if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, freshen(x)]));
  return v;
}

const enc = (s: string) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, "\uffff")).replace(/%EF%BF%BF/g, "%ED%A0%80");
function encodeForm(obj: Record<string, unknown>): string {
  return Object.entries(obj)
    .map(([k, v]) => `${enc(k)}=${enc(typeof v === "string" ? v : JSON.stringify(v))}`)
    .join("&");
}

it("field-by-field mutation of documented operations", { timeout: 1_500_000 }, async () => {
  const ops = [...(await docOps("/auth/v1")), ...(await docOps("/storage/v1"))];
  console.log(`ops: ${ops.length}`);
  const stats = new Map<string, number>();
  const started = Date.now();
  for (const { method, path: template, op } of ops) {
    if (/openapi|reference|healthz/.test(template)) continue;
    const user = await nhostUser();
    const ids: [string, Record<string, string>][] = [];
    if (template.includes("/admin")) ids.push(["admin", { "x-hasura-admin-secret": ADMIN_SECRET }]);
    else if (template.startsWith("/storage/")) {
      ids.push(["admin", { "x-hasura-admin-secret": ADMIN_SECRET }]);
      ids.push(["user", { authorization: `Bearer ${user.token}` }]);
    } else ids.push(["user", { authorization: `Bearer ${user.token}` }]);
    const path = template.replace(/\{([^}]+)\}/g, (_, n: string) => (/user/i.test(n) ? user.id : "00000000-0000-0000-0000-000000000000"));
    const queryParams = (op.parameters ?? []).filter((p) => p.in === "query");
    const query: Record<string, string> = {};
    for (const q of queryParams) {
      const ex = q.example ?? q.schema?.examples?.[0] ?? q.schema?.example;
      if (ex !== undefined) query[q.name] = typeof ex === "string" ? ex : JSON.stringify(ex);
    }
    const ctypes = Object.keys(op.requestBody?.content ?? {});
    const ctype = ctypes[0];
    const example = ctype ? freshen(op.requestBody!.content[ctype]!.example) : undefined;
    for (const [who, base] of ids) {
      const go = async (label: string, q: Record<string, string>, body: unknown) => {
        const qs = new URLSearchParams(q).toString();
        const url = path + (qs ? `?${qs}` : "");
        const headers: Record<string, string> = { ...base };
        let payload: string | undefined;
        if (body !== undefined && ctype) {
          headers["content-type"] = ctype;
          payload = ctype.includes("json") ? JSON.stringify(body) : ctype.includes("form-urlencoded") ? encodeForm(body as Record<string, unknown>) : undefined;
          if (ctype.includes("multipart")) {
            const fd = new FormData();
            for (const [k, v] of Object.entries(body as Record<string, unknown>)) fd.append(k, typeof v === "string" ? v : JSON.stringify(v));
            delete headers["content-type"];
            const r = new Response(fd);
            headers["content-type"] = r.headers.get("content-type")!;
            payload = await r.text();
          }
        }
        const o = await send(method, url, { headers, body: payload });
        const k = `${method} ${template} ${who} ${o === "hang" ? "hang" : o.r.status}`;
        stats.set(k, (stats.get(k) ?? 0) + 1);
        judge(`${who} ${method} ${url.slice(0, 150)} ${label}`, path, o);
      };
      await go("baseline", query, example);
      for (const q of queryParams) {
        for (const [vl, v] of VALUES) {
          if (typeof v === "object" && v !== null) continue;
          await go(`query ${q.name}=${vl}`, { ...query, [q.name]: String(v) }, example);
        }
      }
      if (example && typeof example === "object" && !Array.isArray(example)) {
        const ex = example as Record<string, unknown>;
        const keys = Object.keys(ex);
        for (const key of keys) {
          for (const [vl, v] of VALUES) {
            await go(`body ${key}=${vl}`, query, freshen({ ...ex, [key]: v }));
          }
          const inner = ex[key];
          if (inner && typeof inner === "object" && !Array.isArray(inner)) {
            for (const ik of Object.keys(inner)) {
              for (const [vl, v] of VALUES) {
                await go(`body ${key}.${ik}=${vl}`, query, freshen({ ...ex, [key]: { ...(inner as object), [ik]: v } }));
              }
            }
          }
        }
        for (const [vl, v] of VALUES) {
          if (typeof v !== "string") continue;
          await go(`extra field=${vl}`, query, freshen({ ...ex, [v.slice(0, 100) || "k"]: v }));
        }
      }
    }
  }
  console.log(`took ${Date.now() - started} ms`);
  const byStatus = new Map<string, number>();
  for (const [k, v] of stats) {
    const s = k.split(" ").pop()!;
    byStatus.set(s, (byStatus.get(s) ?? 0) + v);
  }
  console.log([...byStatus].map(([k, v]) => `${k}: ${v}`).join(", "));
  printFindings("mutation");
  expect(findings.length).toBe(0);
});
