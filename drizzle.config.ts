import { defineConfig } from "drizzle-kit";
import { tableFiles } from "./scripts/features.cjs";

export default defineConfig({
  dialect: "sqlite",
  // The features' tables (src/runtime/features.ts lists the features) and the plumbing's; src/db/schema.ts only
  // gathers them for the code.
  schema: tableFiles(),
  out: "./migrations",
});
