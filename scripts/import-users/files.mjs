// Reading the export files: NDJSON line by line, a JSON document whole, a CSV through csv-parse (a well-kept parser:
// quoting, embedded newlines and BOMs are its business, not ours). A file that is not what `--from` says refuses the
// run (RefusedFile) before anything is sent.
import { createReadStream } from "node:fs";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { parse } from "csv-parse";

/** The run is refused, nothing written: the file is not the export `--from` names, or it lacks what it needs. */
export class RefusedFile extends Error {}

/** The first characters of a file, to tell a JSON document, NDJSON and a CSV apart in a refusal's message. */
export function looksLike(text) {
  const start = text.replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("{") && /^\{\s*"users"\s*:/.test(start)) return "a Firebase auth:export file";
  if (start.startsWith("{") && /^\{\s*"Users"\s*:/.test(start)) return "a Cognito ListUsers file";
  if (start.startsWith("{")) return "JSON";
  if (start.startsWith("[")) return "a JSON array";
  return "a CSV or text file";
}

async function head(file) {
  const stream = createReadStream(file, { encoding: "utf8", start: 0, end: 4095 });
  let text = "";
  for await (const chunk of stream) text += chunk;
  return text;
}

/** NDJSON: one JSON object per line; `{line, value}` or `{line, error}` for a line that is not one. */
export async function* ndjsonLines(file, { kind, firstLine }) {
  const lines = createInterface({ input: createReadStream(file, { encoding: "utf8" }), crlfDelay: Infinity });
  let n = 0;
  let checked = false;
  for await (const raw of lines) {
    n++;
    const text = n === 1 ? raw.replace(/^\uFEFF/, "") : raw;
    if (text.trim() === "") continue;
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      if (!checked) throw new RefusedFile(`${file} is not ${kind} (NDJSON): its first line is not JSON`);
      yield { line: n, error: "not a JSON line" };
      continue;
    }
    if (!checked) {
      const wrong = firstLine(value);
      if (wrong) throw new RefusedFile(`${file} is not ${kind}: ${wrong} (it looks like ${looksLike(text)})`);
      checked = true;
    }
    yield { line: n, value };
  }
}

/** A whole JSON document (Firebase's and Cognito's exports are one document each). */
export async function jsonDocument(file, kind) {
  const text = await readFile(file, "utf8");
  try {
    return JSON.parse(text.replace(/^\uFEFF/, ""));
  } catch {
    throw new RefusedFile(`${file} is not ${kind}: not a JSON document (it looks like ${looksLike(text)})`);
  }
}

/**
 * A CSV with a header row: `{line, row}` per record, the row keyed by column name. `required`: the columns the export
 * always has; a header without one of them refuses the run, naming what is missing.
 */
export async function* csvRows(file, { kind, required }) {
  const parser = createReadStream(file).pipe(
    parse({
      bom: true,
      columns: (header) => {
        const names = header.map((name) => String(name).trim());
        const missing = required.filter((name) => !names.includes(name));
        if (missing.length > 0)
          throw new RefusedFile(
            `${file} is not ${kind}: the header lacks ${missing.join(", ")} (it has ${names.slice(0, 8).join(", ") || "nothing"})`,
          );
        return names;
      },
      skip_empty_lines: true,
      // Fewer cells than the header: the missing ones are empty. More: the file is not what it says (a row whose line
      // ending differs from the first line's is read as more cells of the row before, and its user would be lost,
      // then removed by the removal pass): refused.
      relax_column_count_less: true,
      info: true,
    }),
  );
  try {
    for await (const { record, info } of parser) yield { line: info.lines, row: record };
  } catch (error) {
    if (error instanceof RefusedFile) throw error;
    // csv-parse's own error (an unclosed quote): where it is, and nothing after it can be read reliably.
    throw new RefusedFile(`${file} is not a readable CSV: ${error.message}`);
  } finally {
    parser.destroy();
  }
}

/** Whether a file starts like a CSV rather than JSON (for `--from csv|clerk` given a JSON file). */
export async function refuseJson(file, kind) {
  const start = (await head(file)).replace(/^\uFEFF/, "").trimStart();
  if (start.startsWith("{") || start.startsWith("["))
    throw new RefusedFile(`${file} is not ${kind}: it looks like ${looksLike(start)}`);
}

/** A CSV cell holding a boolean as people write them. */
export function truthy(value) {
  return /^(true|t|1|yes|y)$/i.test(String(value ?? "").trim());
}
