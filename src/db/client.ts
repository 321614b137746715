import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof build>;

function build(d1: D1Database) {
  return drizzle(d1, { schema });
}

// Building a Drizzle instance walks the whole schema: do it once per binding, not once per request.
const instances = new WeakMap<D1Database, Db>();
const bindings = new WeakMap<Db, D1Database>();

export function createDb(d1: D1Database): Db {
  let db = instances.get(d1);
  if (!db) {
    db = build(d1);
    instances.set(d1, db);
    bindings.set(db, d1);
  }
  return db;
}

/** The binding a Drizzle instance runs on (a shard's, or a moving slot's waiting one: src/db/slot-wait.ts). */
export const bindingOf = (db: Db): D1Database | undefined => bindings.get(db);
