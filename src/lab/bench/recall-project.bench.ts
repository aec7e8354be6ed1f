// Project-scope recall cost: a folder of 100 generated sessions of one cwd (about 200 MB of JSONL, written at run
// time to a temp dir and removed after), searched with context_grep { scope: "project" } through the same store
// and search code the tool uses, against `grep -F -r` over the same folder, measured in the same run. The needle
// is absent, so both sides read everything; the project search follows its cursors to the end. The first search
// reads and indexes every file; the repeated one reuses the indexes (the files are unchanged).
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { defaultSessionDir, ProjectSessionStore } from "../../host/project-sessions.ts";
import { grepProject, type ProjectGrepDetails } from "../../recall/project.ts";
import type { GrepParams } from "../../recall/search.ts";
import { recallLimits } from "../../recall/settings.ts";
import { createTranscript } from "../../recall/transcript.ts";
import { generateSession } from "../sample/generate.ts";
import type { BenchRow } from "./types.ts";

const SESSIONS = 100;
/** Tasks per generated session: about 2 MB of JSONL each. */
const TASKS = 60;
const CWD = "/home/dev/projects/bench-project";

/** Write the folder: each session generated, given the common cwd, and streamed to its file. */
async function writeFolder(dir: string): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < SESSIONS; i++) {
    const { entries } = generateSession(9_100 + i, i, { tasks: TASKS, longOutputRate: 0.03 });
    const header = { ...entries[0], cwd: CWD };
    const name = `${String(header.timestamp).replace(/[:.]/g, "-")}_${(header as { id: string }).id}.jsonl`;
    const out = createWriteStream(join(dir, name));
    for (const entry of [header, ...entries.slice(1)]) {
      const line = `${JSON.stringify(entry)}\n`;
      bytes += Buffer.byteLength(line);
      if (!out.write(line)) await new Promise<void>((done) => out.once("drain", () => done()));
    }
    await new Promise<void>((done) => out.end(() => done()));
  }
  return bytes;
}

/** Median wall time of `grep` over the folder, process start included. */
function timeGrep(args: readonly string[], dir: string, runs = 5): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const r = spawnSync("grep", [...args, dir], { encoding: "utf8", maxBuffer: 1 << 28 });
    samples.push(performance.now() - t);
    if (r.status !== 0 && r.status !== 1) throw new Error(`grep failed: ${r.stderr}`);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

export async function benchRecallProject(): Promise<BenchRow[]> {
  const root = mkdtempSync(join(tmpdir(), "ctx-ledger-project-bench-"));
  try {
    const agent = join(root, "agent");
    const dir = defaultSessionDir(CWD, agent);
    mkdirSync(dir, { recursive: true });
    const bytes = await writeFolder(dir);
    const sm = {
      getCwd: () => CWD,
      getSessionDir: () => dir,
      getSessionId: () => "bench-current",
      getSessionFile: () => undefined,
      getHeader: () => ({ type: "session", id: "bench-current", timestamp: "2030-01-01T00:00:00.000Z", cwd: CWD }),
    } as unknown as ExtensionContext["sessionManager"];
    const env = { PI_CODING_AGENT_DIR: agent } as NodeJS.ProcessEnv;
    const store = new ProjectSessionStore();
    const limits = recallLimits({});

    /** One project-scope search to its end: every page, following cursors, as an agent calling again would. */
    const search = async (params: GrepParams): Promise<{ ms: number; calls: number; sessions: number }> => {
      const t = performance.now();
      let cursor: string | undefined;
      let calls = 0;
      let sessions = 0;
      do {
        const source = await store.source(sm, createTranscript(), env);
        if ("refused" in source) throw new Error(source.refused);
        const out = await grepProject(source, { ...params, cursor }, limits);
        if (!out.ok) throw new Error(out.error);
        if ((out.details as ProjectGrepDetails).matches.length)
          throw new Error(`bench needle ${params.pattern} was found`);
        sessions += out.details.sessionsSearched;
        cursor = out.nextCursor;
        calls++;
      } while (cursor);
      return { ms: performance.now() - t, calls, sessions };
    };

    const needle = "zq-no-such-token-81";
    const exact = { pattern: needle, literal: true, caseSensitive: true };
    const grepExact = timeGrep(["-F", "-r", needle], dir);
    const first = await search(exact);
    const repeated = await search(exact);
    const repeatedAgain = await search(exact);
    const warm = Math.min(repeated.ms, repeatedAgain.ms);
    const grepFold = timeGrep(["-F", "-i", "-r", needle], dir);
    const folded = await search({ pattern: needle, literal: true });
    const mb = (bytes / 1e6).toFixed(0);
    const reference = `grep -F -r over the same ${SESSIONS} files (${mb} MB)`;
    return [
      { suite: "recall-project", name: `grep -F -r, ${SESSIONS} sessions, ${mb} MB`, value: grepExact, unit: "ms" },
      {
        suite: "recall-project",
        name: `first project grep (reads and indexes every file; ${first.calls} calls, ${first.sessions} sessions searched)`,
        value: first.ms,
        unit: "ms",
        reference,
        ratio: first.ms / grepExact,
      },
      {
        suite: "recall-project",
        name: `repeated project grep (indexes reused; ${repeated.calls} calls)`,
        value: warm,
        unit: "ms",
        reference,
        ratio: warm / grepExact,
        target: "≤ 3x",
      },
      {
        suite: "recall-project",
        name: "repeated project grep, ignoring case (the default)",
        value: folded.ms,
        unit: "ms",
        reference: `grep -F -i -r, same files`,
        ratio: folded.ms / grepFold,
        target: "≤ 3x",
      },
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
