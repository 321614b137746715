// better-auth as the bench runs it, on workerd (worker.mjs) and on Node (node-server.mjs): email and password on,
// everything else at its defaults (scrypt N=16384 r=16 p=1 for passwords, 7-day sessions extended once a day, no
// cookie cache), with its own rate limiter off as ours is off in the rows it is compared with.

/** The options of one instance. `updateAge` 0 makes every session read extend the session: the "refresh" row. */
export function betterAuthOptions({ database, secret, baseURL, basePath, updateAge, password }) {
  return {
    database,
    secret,
    baseURL,
    basePath,
    // `password`: a hasher of the bench's own (./equal-hasher.mjs), for the rows at equal strength.
    emailAndPassword: { enabled: true, ...(password ? { password } : {}) },
    rateLimit: { enabled: false },
    telemetry: { enabled: false },
    ...(updateAge === undefined ? {} : { session: { updateAge } }),
  };
}

/** Two instances over one database: sessions made by either are read by both (same secret, same tables). */
export const BASE_PATH = "/api/auth";
export const EXTEND_BASE_PATH = "/extend/auth";
/** The instance whose passwords are hashed at OWASP's equal scrypt (./equal-hasher.mjs): sign-up and sign-in rows. */
export const EQUAL_BASE_PATH = "/equal/auth";
