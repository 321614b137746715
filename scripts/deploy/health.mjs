// The deployed Worker's health endpoints, asked until they answer "OK" or the wait is over: a first deploy's
// workers.dev host can take a little while to answer.
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The health URLs of [env.production]'s variables: auth's and storage's (src/http/system-routes.ts, storage/app.ts). */
export function healthUrls(vars) {
  const auth = String(vars.AUTH_SERVER_URL).replace(/\/+$/, "");
  const storageBase = String(vars.STORAGE_SERVER_URL ?? URL.parse(auth)?.origin ?? auth).replace(/\/+$/, "");
  const prefix = vars.STORAGE_API_PREFIX ?? "/storage/v1";
  return [`${auth}/healthz`, `${storageBase}${prefix}/healthz`];
}

async function answersOk(url) {
  try {
    const response = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(10_000) });
    const body = await response.text();
    return response.status === 200 && body.trim() === '"OK"'
      ? null
      : `${response.status} ${body.slice(0, 120)}`;
  } catch (error) {
    return error.cause?.code ?? error.cause?.errors?.[0]?.code ?? error.message;
  }
}

/** The URLs that did not answer "OK" within `waitSeconds`, each with its last answer. */
export async function checkHealth(urls, { waitSeconds }) {
  const deadline = Date.now() + waitSeconds * 1000;
  const failing = new Map();
  for (const url of urls) {
    for (;;) {
      const problem = await answersOk(url);
      if (problem === null) {
        failing.delete(url);
        break;
      }
      failing.set(url, problem);
      if (Date.now() >= deadline) break;
      await sleep(2000);
    }
  }
  return [...failing].map(([url, problem]) => `${url}: ${problem}`);
}
