import { describe, expect, it } from "vitest";
import { expectContractError, service } from "../helpers";
import { admin } from "./support";

/**
 * What the OpenAPI-driven fuzz of issue 42 found in the import's routes: each answer is a clear 4xx in the contract's
 * error shape, never a 500 and never a 200 that quietly did nothing.
 */
const svc = service();
const post = (path: string, json: unknown) => svc.request("POST", path, { json, headers: admin() });

/** A value nested `depth` levels deep, `{"a":{"a":…}}`, as text: JSON.stringify itself gives up long before. */
const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
const postText = (path: string, text: string) =>
  svc.request("POST", path, { body: text, headers: { ...admin(), "content-type": "application/json" } });

describe("the import refuses batches it cannot read", () => {
  // A batch of rows that are not objects (numbers, strings, arrays, null) was answered 200 with every row skipped:
  // the command would report a run that wrote nothing as done. It is a malformed request.
  it.each([
    ["/admin/import/nhost/users", "users"],
    ["/admin/import/nhost/buckets", "buckets"],
    ["/admin/import/nhost/files/plan", "files"],
  ])("%s with rows that are not objects answers 400", async (path, field) => {
    for (const rows of [[1, 2], ["a"], [null], [[{}]]]) {
      const response = await post(path, { [field]: rows });
      expect(response.status, `${path} ${JSON.stringify(rows)}`).toBe(400);
      const body = (await response.clone().json()) as { error: string; message: string };
      await expectContractError(response, path);
      expect(body.error).toBe("invalid-request");
      expect(body.message).toMatch(new RegExp(field));
    }
  });

  // A report nested thousands of levels deep blew the stack while it was written to the audit log and the event
  // stream (a 500). The report is the command's summary: a few levels at most.
  it("a completion whose report is nested too deeply answers 400, and an ordinary one 204", async () => {
    for (const report of [nested(200_000), `{"users":${nested(40)}}`]) {
      const response = await postText("/admin/import/nhost/completed", `{"report":${report}}`);
      expect(response.status).toBe(400);
      expect(((await response.clone().json()) as { message: string }).message).toMatch(/report/);
      await expectContractError(response, "completed");
    }
    const fine = await post("/admin/import/nhost/completed", { report: { users: { imported: 1, kept: 0 } } });
    expect(fine.status).toBe(204);
  });
});
