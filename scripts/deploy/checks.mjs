// What `npm run deploy` refuses before it touches Cloudflare: every value still a placeholder or on example.com, a
// Worker that would get no URL, no AUTH_SERVER_URL, a development transport switched on, a service that must send
// mail with no way to (the first sign-up would answer 500), an AUTH_D1_SHARDS list not starting with DB. Resource ids
// are not among them: the deploy creates what is missing (resources.mjs). Moved here from scripts/deploy.mjs.

/** Where a resource id lives in [env.production]: a placeholder there is filled by the deploy, not refused. */
const RESOURCE_ID =
  /^env\.production\.(d1_databases\[\d+\]\.database_id|kv_namespaces\[\d+\]\.id|hyperdrive\[\d+\]\.id)$/;

/** Every string in the configuration that is still a placeholder, by where it is. */
function placeholders(value, path, found = []) {
  if (typeof value === "string") {
    if (/REPLACE_/.test(value) && !RESOURCE_ID.test(path)) found.push(`${path} = "${value}"`);
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) placeholders(item, `${path}[${i}]`, found);
  } else if (value && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) placeholders(item, path ? `${path}.${key}` : key, found);
  }
  return found;
}

/** A boolean variable as config.ts reads it ("true"/"1", "false"/"0"; unset: the default). */
export function switchOn(value, fallback) {
  if (value === undefined || value === "") return fallback;
  return String(value) === "true" || String(value) === "1";
}

/** The host a route pattern serves (`auth.acme.dev/*`, `{ pattern = "auth.acme.dev", custom_domain = true }`). */
const routeHost = (route) => (typeof route === "string" ? route : route.pattern).replace(/\/.*$/, "");

/** Whether a route's host pattern (`*.acme.dev` matches one or more labels) covers `host`. */
function routeCovers(pattern, host) {
  if (!pattern.includes("*")) return pattern.toLowerCase() === host;
  const regex = pattern
    .toLowerCase()
    .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*");
  return new RegExp(`^${regex}$`).test(host);
}

/** The D1 bindings users are spread over (AUTH_D1_SHARDS, docs/scaling.md), DB first; one, DB, by default. */
export const shardsOf = (vars) =>
  String(vars.AUTH_D1_SHARDS ?? "DB")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);

/**
 * The checks. `secretNames`: the production secrets known to be set (the secrets file's and the Worker's), or null
 * when they cannot be known (a dry run not logged in). `placeholderProblems` are refused by a real deploy only.
 */
export function checkProduction({ rawConfig, production, env, secretNames }) {
  const problems = [];
  const placeholderProblems = [];
  const warnings = [];
  for (const found of placeholders(production, `env.${env}`)) {
    placeholderProblems.push(`${found}: replace it with your own value`);
  }
  const onExampleDomain = (value) => /^https?:\/\/[^/]*\bexample\.com\b/.test(String(value));
  const vars = production.vars ?? {};
  for (const [name, value] of Object.entries(vars)) {
    if (onExampleDomain(value)) {
      placeholderProblems.push(
        `env.${env}.vars.${name} = "${value}": still the example domain; set your own URL`,
      );
    }
  }
  const routes = [...(production.routes ?? []), ...(production.route ? [production.route] : [])];
  if (production.workers_dev !== true && routes.length === 0) {
    problems.push(
      `env.${env}: the Worker would get no URL. Set workers_dev = true (https://${production.name ?? rawConfig.name}.<your-subdomain>.workers.dev), or add a custom domain: routes = [{ pattern = "auth.your-domain.com", custom_domain = true }]`,
    );
  }
  if (!vars.AUTH_SERVER_URL) {
    problems.push(
      `env.${env}.vars.AUTH_SERVER_URL is not set: tokens would name, and mails link to, http://localhost:8787. Set it to https://<the Worker's host>/auth/v1`,
    );
  }
  // The development transports keep every mail and SMS readable at /auth/v1/dev/* by anyone (npm start sets them).
  for (const name of ["AUTH_DEV_MAILBOX", "AUTH_DEV_SMS"]) {
    if (switchOn(vars[name], false)) {
      problems.push(
        `env.${env}.vars.${name} is on: anyone could read every message at /auth/v1/dev/*; remove it (development only)`,
      );
    }
  }

  // Mail (src/mail/create-mailer.ts): SMTP when AUTH_SMTP_HOST is set, else Cloudflare Email Service through the
  // send_email binding named EMAIL; with neither, every mail is a 500. Sign-up mails a verification link unless
  // AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED is off, and magic links and email codes are mail too.
  /** Whether a value is set in [env.production.vars] or among the secrets: true, false, or null (cannot be known). */
  const configured = (name) =>
    vars[name] !== undefined && vars[name] !== ""
      ? true
      : secretNames === null
        ? null
        : secretNames.includes(name);
  const mailSwitches = [
    ["AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED", true],
    ["AUTH_EMAIL_PASSWORDLESS_ENABLED", false],
    ["AUTH_OTP_EMAIL_ENABLED", false],
  ].filter(([name, fallback]) => switchOn(vars[name], fallback));
  const emailBinding = (production.send_email ?? []).some((binding) => binding.name === "EMAIL");
  const smtpHost = configured("AUTH_SMTP_HOST");
  if (mailSwitches.length > 0 && !emailBinding && smtpHost !== true) {
    const why = `${mailSwitches.map(([name]) => name).join(", ")} ${mailSwitches.length > 1 ? "are" : "is"} on, so the service sends mail (the first sign-up would answer 500 without a way to)`;
    const fix = `add a transport to [env.${env}]: Cloudflare Email Service,
      [[env.${env}.send_email]]
      name = "EMAIL"
    with AUTH_SMTP_SENDER = "Your app <noreply@your-domain.com>" in [env.${env}.vars] (README "Mail"), or SMTP: AUTH_SMTP_HOST (and AUTH_SMTP_PORT, AUTH_SMTP_USER, AUTH_SMTP_SENDER) in [env.${env}.vars] with the password as a secret (AUTH_SMTP_PASS). No mail at all: AUTH_EMAIL_SIGNIN_EMAIL_VERIFIED_REQUIRED = "false"`;
    if (smtpHost === false) problems.push(`no mail transport: ${why}. To fix, ${fix}`);
    else
      warnings.push(
        `no EMAIL binding and no AUTH_SMTP_HOST in [env.${env}.vars]; it may be a secret on Cloudflare, which a dry run not logged in does not check. ${why}`,
      );
  }
  if ((emailBinding || smtpHost === true) && configured("AUTH_SMTP_SENDER") === false) {
    problems.push(
      `AUTH_SMTP_SENDER is not set: every mail transport sends from it, and without it the service answers every request with 500. Add AUTH_SMTP_SENDER = "Your app <noreply@your-domain.com>" to [env.${env}.vars]`,
    );
  }

  // The D1 databases users are spread over: each holds the same tables, so each gets every migration, DB (the home
  // database) first. A listed binding without its [[env.production.d1_databases]] entry is created and added.
  const shards = shardsOf(vars);
  if (shards[0] !== "DB") {
    problems.push(
      `env.${env}.vars.AUTH_D1_SHARDS = "${vars.AUTH_D1_SHARDS}": the first database must be DB, the home database`,
    );
  }
  if (new Set(shards).size !== shards.length) {
    problems.push(`env.${env}.vars.AUTH_D1_SHARDS = "${vars.AUTH_D1_SHARDS}": a database is named twice`);
  }

  // The issuer of every token and the base of every mailed link: a host this Worker does not answer at breaks both.
  const serverUrl = vars.AUTH_SERVER_URL;
  if (serverUrl && !onExampleDomain(serverUrl) && !/REPLACE_/.test(serverUrl)) {
    let host = null;
    try {
      host = new URL(serverUrl).hostname.toLowerCase();
    } catch {
      problems.push(`env.${env}.vars.AUTH_SERVER_URL = "${serverUrl}": not a URL`);
    }
    const name = String(production.name ?? rawConfig.name).toLowerCase();
    const workersDev =
      production.workers_dev === true && host?.startsWith(`${name}.`) && host.endsWith(".workers.dev");
    const routed = routes.some((route) => routeCovers(routeHost(route), host));
    if (host && !workersDev && !routed) {
      const answersAt = [
        ...(production.workers_dev === true ? [`${name}.<your-subdomain>.workers.dev`] : []),
        ...routes.map(routeHost),
      ];
      warnings.push(
        `AUTH_SERVER_URL (${serverUrl}) is on ${host}, but the Worker answers at ${answersAt.join(" and ") || "no URL"}: tokens would name an issuer, and mails links to, a host that may not reach it. Set AUTH_SERVER_URL to https://<one of those>/auth/v1, or add ${host} to routes`,
      );
    }
  }

  const urls = [
    ...routes.map(
      (route) => `https://${(typeof route === "string" ? route : route.pattern).replace(/\/\*$/, "")}`,
    ),
    ...(production.workers_dev === true
      ? [`https://${production.name ?? rawConfig.name}.<your-subdomain>.workers.dev`]
      : []),
  ];
  return { problems, placeholderProblems, warnings, shards, urls };
}
