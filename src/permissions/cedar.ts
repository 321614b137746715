import type * as Engine from "./engine";
import type * as RelationUses from "./relation-uses";

/**
 * Cedar and what reads its policies, loaded by the first check, search or write an isolate makes, and kept: nothing
 * imports engine.ts or relation-uses.ts statically (engine.ts says why). The modules are kept rather than the import's
 * promise, so that no request ever waits on another's; the first calls each import (the module is evaluated once),
 * every later one returns at once.
 */
type Cedar = typeof Engine & typeof RelationUses;

let loaded: Cedar | undefined;

export async function loadCedar(): Promise<Cedar> {
  if (loaded) return loaded;
  const [engine, relationUses] = await Promise.all([import("./engine"), import("./relation-uses")]);
  loaded = { ...engine, ...relationUses };
  return loaded;
}
