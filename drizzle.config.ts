import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "sqlite",
  // The files that declare tables; src/db/schema.ts only gathers them.
  schema: "./src/db/tables/*.ts",
  out: "./migrations",
});
