import { loadCedar } from "../src/permissions/cedar";

// Cedar is loaded by the first permission check, search or write an isolate makes (src/permissions/cedar.ts). Under
// the Vitest plugin that load is seconds (its WASM reaches workerd as 12 MB of JSON: src/permissions/engine.ts), 8 s
// and more on the 2-core machine, and it fell inside whichever test checked a permission first in its lane, whose
// 15 s are for its own work (a console test timed out on it in a CI run). The workers project's lanes each run some
// permission tests, so each loads Cedar here, before its first file, as it did when the import was static; files
// after the first find it loaded. The own-storage files start a workerd each and, but one, never check a permission:
// they do not load it (test/permissions/search.test.ts does, in a hook of its own).
await loadCedar();
