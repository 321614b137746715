// The isolate's short memory of file records, with a movable clock: what it answers and when it forgets.
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { currentFileWithBucket, forgetFile, recentFileWithBucket } from "../../src/storage/record-cache";
import { signUp, testDeps } from "../helpers";
import { svc, uploaded, uploadForm } from "./helpers";

const depsAt = (clock: { now: number }) => testDeps(svc.env, clock);

describe("record cache", () => {
  it("answers from memory for five seconds, then reads D1 again; forgetting is immediate", async () => {
    const session = await signUp(svc);
    const [file] = await uploaded(uploadForm([{ bytes: "x" }]), session.accessToken);
    const clock = { now: 1_000_000 };
    const deps = depsAt(clock);
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("file.bin");

    await env.DB.prepare("UPDATE files SET name = 'renamed' WHERE id = ?").bind(file!.id).run();
    clock.now += 4_999;
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("file.bin");
    clock.now += 1;
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("renamed");

    await env.DB.prepare("UPDATE files SET name = 'again' WHERE id = ?").bind(file!.id).run();
    forgetFile(file!.id);
    expect((await recentFileWithBucket(deps, file!.id))?.file.name).toBe("again");
    expect((await currentFileWithBucket(deps, file!.id))?.file.name).toBe("again");
  });

  it("never remembers a missing file", async () => {
    const deps = depsAt({ now: 5 });
    const id = crypto.randomUUID();
    expect(await recentFileWithBucket(deps, id)).toBeUndefined();
    const session = await signUp(svc);
    await uploaded(uploadForm([{ bytes: "y", metadata: { id } }]), session.accessToken);
    expect((await recentFileWithBucket(deps, id))?.file.id).toBe(id);
  });
});
