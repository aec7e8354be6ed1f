// `--dump DIR` and the recommendation, through the CLI as a user runs it: the view right after every act
// of every row as the provider would receive it, with the session, row, request index and leaf entry id;
// and the terminal and JSON answer "which strategy", under the weights given.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { DumpLine } from "../../src/lab/dump.ts";
import type { LabResult } from "../../src/lab/results.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
const CWD = "/home/u/proj";

function lab(args: string[]) {
  const r = spawnSync(process.execPath, [join(repo, "src/lab/bin.ts"), "lab", ...args], {
    encoding: "utf8",
    timeout: 120_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const readLines = (file: string): DumpLine[] =>
  readFileSync(file, "utf8")
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as DumpLine);

describe("--dump", () => {
  const dir = mkdtempSync(join(tmpdir(), "lab-dump-"));
  const session = readingSession(CWD);
  const file = join(dir, "abs.jsonl");
  writeFileSync(file, sessionJsonl(session.entries, CWD));
  const dump = join(dir, "views");
  const json = join(dir, "out.json");
  const r = lab([
    file,
    "--window",
    "40k",
    "--strategies",
    "checkpoint,masking,none",
    "--dump",
    dump,
    "--json",
    json,
    "--weights",
    "quality=1,cost=0",
    "--no-report",
    "--quiet",
  ]);
  const result = JSON.parse(readFileSync(json, "utf8")) as LabResult;
  const rows = Object.fromEntries(result.sessions[0].rows.map((row) => [row.info.id, row]));
  /** Id of the source entry right before the assistant message of request `r`. */
  const beforeRequest = (request: number) => {
    const assistants = session.entries
      .map((e, i) => [e, i] as const)
      .filter(([e]) => e.type === "message" && e.message.role === "assistant");
    return session.entries[assistants[request][1] - 1].id;
  };

  it("writes one line per act and row, with session, row, request, leaf entry id and tokens", () => {
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Dump: ${dump}`);
    const checkpoint = readLines(join(dump, "01-abs", "checkpoint.jsonl"));
    expect(checkpoint).toHaveLength(rows.checkpoint.actions.length);
    expect(checkpoint.length).toBeGreaterThan(0);
    checkpoint.forEach((line, i) => {
      expect(line).toMatchObject({
        session: "abs.jsonl",
        row: "checkpoint",
        label: "checkpoint",
        act: i,
        kind: "compaction",
        request: rows.checkpoint.actions[i].request,
        tokens: rows.checkpoint.actions[i].tokensAfter,
      });
      // The row's own compaction fact is the newest entry of its ledger.
      expect(line.leafEntryId).toBe(`lab-checkpoint-${i.toString(36).padStart(4, "0")}`);
    });
    const masking = readLines(join(dump, "01-abs", "masking.jsonl"));
    expect(masking).toHaveLength(rows.masking.actions.length);
    for (const line of masking) expect(line.leafEntryId).toBe(beforeRequest(line.request));
    // A row that never acts writes nothing.
    expect(existsSync(join(dump, "01-abs", "none.jsonl"))).toBe(false);
  });

  it("the messages are the ones a provider would receive: the summary wrapped as a user message, tool results as tool results", () => {
    const [first] = readLines(join(dump, "01-abs", "checkpoint.jsonl"));
    expect(first.messages[0].role).toBe("user");
    const text = JSON.stringify(first.messages[0].content);
    expect(text).toContain("<summary>");
    expect(text).toContain("src/mod0.ts");
    expect(first.messages.some((m) => m.role === "toolResult")).toBe(true);
    expect(first.messages.every((m) => ["user", "assistant", "toolResult"].includes(m.role))).toBe(true);
    // Masking blanks old outputs in place: the dumped view shows the placeholder.
    const masking = readLines(join(dump, "01-abs", "masking.jsonl"));
    expect(JSON.stringify(masking.at(-1)!.messages)).toContain("[Old tool output omitted");
  });

  it("the terminal and the JSON recommend a strategy under the weights given", () => {
    expect(r.stdout).toMatch(
      /Recommendation for this session:\n {2}Use checkpoint: "strategy": "checkpoint" \(the default\)\. Score [\d.]+ of 100 \(weights: quality 100%, cost 0%\)\./,
    );
    expect(result.recommendation?.choice?.id).toBe("checkpoint");
    expect(result.recommendation?.weights).toEqual({ quality: 1, cost: 0 });
    expect(result.sessions[0].recommendation?.choice?.id).toBe("checkpoint");
  });

  it("a dump path that is a file, or bad weights, are refused before the run", () => {
    const again = lab([file, "--dump", file, "--no-report"]);
    expect(again.code).toBe(2);
    expect(again.stderr.trimEnd()).toMatch(/^lab: cannot write --dump .*abs\.jsonl: not a directory$/);
    const weights = lab([file, "--weights", "speed=2", "--no-report"]);
    expect(weights.code).toBe(2);
    expect(weights.stderr.trimEnd()).toMatch(/^lab: bad weight "speed=2"/);
  });
});
