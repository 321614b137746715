import { AppError, platformFault } from "../errors";

/** Something single-use that was taken, and how to make it usable again as it was. */
export interface PutBack {
  putBack(): Promise<void>;
}

/** For a take that leaves nothing to restore (a passkey ceremony, spent in its object). */
export const NOTHING_TO_PUT_BACK: PutBack = { putBack: async () => {} };

/**
 * Runs what follows a single-use secret's take (a mailed link's ticket, an exchange code); when that fails for a
 * fault, the 503 the client retries, the secret is put back first, so the retry can still use it. Without this a
 * database blip after the take lost the link the user had clicked. A refusal (a disabled user, a stale change) keeps
 * it spent. The take itself stays the one atomic statement that lets exactly one request win; what follows must be
 * safe to run again (a session's writes leave nothing half made, writeSession; each link's effect is idempotent).
 */
export async function onFaultPutBack<T>(taken: PutBack, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error instanceof AppError && error.status === 503) || platformFault(error)) await taken.putBack();
    throw error;
  }
}

/**
 * A put-back that writes `restore` (the taken row, inserted again; a newer row in its place wins). Best effort: the
 * database that just failed may still be failing, and then the secret is lost as it was before, logged.
 */
export function putBackWith(what: string, restore: () => Promise<unknown>): PutBack["putBack"] {
  return async () => {
    await restore().catch((error: unknown) =>
      console.error(JSON.stringify({ level: "error", what: `${what} put back`, detail: String(error) })),
    );
  };
}

/** A single-use secret claimed under a key of its own: put back by that key on a fault, spent otherwise. */
export interface Claimed extends PutBack {
  /** Deletes the claimed row for good. */
  spend(): Promise<unknown>;
}

/**
 * `onFaultPutBack` for a claimed secret (an exchange code, a mailed link's ticket): a fault puts it back; an answer or
 * a refusal spends it, its claimed row deleted after the answer by `background` (best effort: a claimed row left over
 * can never be used again, and goes with the expired rows of its kind in the daily sweep).
 */
export async function spentUnlessPutBack<T>(
  background: (work: Promise<unknown>, what?: string) => void,
  what: string,
  claimed: Claimed,
  work: () => Promise<T>,
): Promise<T> {
  let putBack = false;
  const taken: PutBack = {
    putBack: async () => {
      putBack = true;
      await claimed.putBack();
    },
  };
  try {
    return await onFaultPutBack(taken, work);
  } finally {
    if (!putBack) background(claimed.spend(), `${what} spent`);
  }
}
