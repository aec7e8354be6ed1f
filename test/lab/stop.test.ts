// A lab run stops when asked and leaves no process behind: the CLI re-starts itself with heap flags (bin.ts),
// and that child must die with its parent however the parent ends, mid-replay.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { killAll, processesWith, settled } from "../support/processes.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const session = resolve(repo, "../shared/sessions/before-compaction.jsonl");
const markers: string[] = [];

afterEach(() => {
  for (const marker of markers.splice(0)) killAll(marker);
});

/** Start a lab on a real session (or the inputs and options `input`) that takes a while, and wait until the child replays it (`started`). */
async function startLab(
  detached = false,
  input: readonly string[] = [session],
  started = "[1/1]",
): Promise<{
  parent: ChildProcess;
  marker: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}> {
  // The marker is the --json path, unique to this run: it is on both processes' command lines.
  const marker = join(mkdtempSync(join(tmpdir(), "lab-stop-")), "out.json");
  markers.push(marker);
  const parent = spawn(
    process.execPath,
    [join(repo, "src/lab/bin.ts"), "lab", ...input, "--json", marker, "--no-report"],
    { cwd: repo, stdio: ["ignore", "pipe", "pipe"], detached },
  );
  let stderr = "";
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((ok) =>
    parent.once("exit", (code, signal) => ok({ code, signal })),
  );
  await new Promise<void>((ok, fail) => {
    parent.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes(started)) ok();
    });
    parent.once("exit", () => fail(new Error(`the lab ended before replaying: ${stderr}`)));
  });
  // Parent and child both run.
  expect(processesWith(marker).length).toBe(2);
  return { parent, marker, stderr: () => stderr, exit };
}

describe.skipIf(!existsSync("/proc") || !existsSync(session))("a lab that stops", () => {
  it("leaves no process when its parent is killed outright (SIGKILL) mid-replay", async () => {
    const { parent, marker, exit } = await startLab();
    parent.kill("SIGKILL");
    await exit;
    expect(await settled(marker)).toEqual([]);
  });

  it("passes SIGTERM on to the replay, reports it, and exits 143", async () => {
    const { parent, marker, exit, stderr } = await startLab();
    parent.kill("SIGTERM");
    expect(await exit).toEqual({ code: 143, signal: null });
    expect(stderr()).toContain("lab: stopped (SIGTERM)");
    expect(await settled(marker)).toEqual([]);
  });

  it("stops a folder replayed on two threads on SIGTERM, with exit 143 and no process left", async () => {
    // The shared sessions folder holds two sessions: the lab's thread replays one, a worker the other.
    const { parent, marker, exit, stderr } = await startLab(
      false,
      [dirname(session), "--jobs", "2"],
      "worker 2 replaying",
    );
    parent.kill("SIGTERM");
    expect(await exit).toEqual({ code: 143, signal: null });
    expect(stderr()).toContain("lab: stopped (SIGTERM)");
    expect(await settled(marker)).toEqual([]);
  });

  it("stops on Ctrl-C (SIGINT to the whole process group) with exit 130 and nothing left drawing", async () => {
    const { parent, marker, exit } = await startLab(true);
    process.kill(-parent.pid!, "SIGINT");
    expect((await exit).code).toBe(130);
    expect(await settled(marker)).toEqual([]);
  });
});
