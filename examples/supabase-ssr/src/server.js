import { serve } from "@hono/node-server";
import { createApp } from "./app.js";

const port = Number(process.env.PORT ?? 3000);
const settings = {
  supabaseUrl: process.env.SUPABASE_URL ?? "http://localhost:8787/supabase",
  supabaseKey: process.env.SUPABASE_PUBLISHABLE_KEY ?? "",
  appUrl: process.env.APP_URL ?? `http://localhost:${port}`,
  bucket: process.env.BUCKET ?? "pictures",
  table: process.env.TABLE ?? "notes",
};
if (!settings.supabaseKey.startsWith("sb_publishable_")) {
  console.error("Set SUPABASE_PUBLISHABLE_KEY to the key `npm start` printed (sb_publishable_…).");
  process.exit(1);
}
serve({ fetch: createApp(settings).fetch, port }, () => console.log(`The example app: ${settings.appUrl}`));
