// Recall across the project's sessions, end to end: real AgentSessions on the faux provider, stored as files in
// Pi's default session directory under a temporary agent directory. An earlier session of the same cwd is found
// and named; sessions of another cwd, damaged files and paths passed as arguments are not read.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message, type ToolResultMessage } from "@earendil-works/pi-ai";
import { defaultSessionDir } from "../../src/host/project-sessions.ts";
import { startHarness, type Harness } from "./harness.ts";

const NEEDLE = "PROJECT-ERR-4711";
let h: Harness | undefined;
let root: string | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const textOf = (m: Message): string =>
  typeof m.content === "string"
    ? m.content
    : m.content
        .map((b) => (b.type === "text" ? b.text : b.type === "toolCall" ? JSON.stringify(b.arguments) : ""))
        .join("\n");
const results = (name: string): ToolResultMessage[] =>
  h!.session.sessionManager
    .getBranch()
    .flatMap((e) =>
      e.type === "message" && e.message.role === "toolResult" && e.message.toolName === name ? [e.message] : [],
    );
/** The tool results the provider was sent in a request. */
const sentResults = (request: Message[]): ToolResultMessage[] =>
  request.filter((m): m is ToolResultMessage => m.role === "toolResult");

/** A first session of the project that ran a failing command; returns its id, file and the result's entry id. */
async function earlierSession(): Promise<{ id: string; file: string; entryId: string; started: string }> {
  root = mkdtempSync(join(tmpdir(), "ctx-ledger-project-"));
  h = await startHarness({ root, defaultSessionDir: true });
  h.script([
    fauxAssistantMessage([fauxToolCall("bash", { command: `echo 'build failed: ${NEEDLE} in src/queue.ts'` })], {
      stopReason: "toolUse",
    }),
    fauxAssistantMessage("the build failed"),
  ]);
  await h.session.prompt("build the queue module");
  const sm = h.session.sessionManager;
  const entry = sm.getBranch().find((e) => e.type === "message" && e.message.role === "toolResult")!;
  const out = {
    id: sm.getSessionId(),
    file: sm.getSessionFile()!,
    entryId: entry.id,
    started: sm.getHeader()!.timestamp,
  };
  await h.dispose();
  h = undefined;
  return out;
}

/** Files the second session's directory should skip: another cwd's session with the needle, and damaged files. */
function plantForeignFiles(dir: string): void {
  const other = JSON.stringify({
    type: "session",
    version: 3,
    id: "other-project-session",
    timestamp: "2030-01-01T00:00:00.000Z",
    cwd: "/elsewhere/other-project",
  });
  const line = JSON.stringify({
    type: "message",
    id: "0ther001",
    parentId: null,
    timestamp: "2030-01-01T00:00:01.000Z",
    message: { role: "user", content: `${NEEDLE} FROM-OTHER-PROJECT`, timestamp: 1 },
  });
  writeFileSync(join(dir, "2030-01-01T00-00-00-000Z_other-project-session.jsonl"), `${other}\n${line}\n`);
  writeFileSync(join(dir, "2029-01-01T00-00-00-000Z_garbage.jsonl"), Buffer.from([0xff, 0x00, 0x13, 0x37, 0x0a, 0x7b]));
  writeFileSync(join(dir, "2029-01-02T00-00-00-000Z_noheader.jsonl"), `${line}\n`);
  writeFileSync(join(dir, "notes.txt"), `${NEEDLE} FROM-A-TEXT-FILE\n`);
  // Another project's own directory, as Pi lays it out.
  const otherDir = defaultSessionDir("/elsewhere/other-project", join(root!, "agent"));
  mkdirSync(otherDir, { recursive: true });
  writeFileSync(join(otherDir, "2030-01-01T00-00-00-000Z_other-project-session.jsonl"), `${other}\n${line}\n`);
}

describe("recall across the project's sessions", () => {
  it("a project-scope grep finds an earlier session's output and names that session; other cwds and damaged files are skipped", async () => {
    const first = await earlierSession();
    const dir = defaultSessionDir(join(root!, "project"), join(root!, "agent"));
    expect(readdirSync(dir)).toEqual([first.file.slice(dir.length + 1)]);
    plantForeignFiles(dir);

    h = await startHarness({ root, defaultSessionDir: true });
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_grep", { pattern: NEEDLE, literal: true }),
          fauxToolCall("context_grep", { pattern: NEEDLE, literal: true, scope: "project" }),
          fauxToolCall("context_show_entry", { id: first.entryId, session: first.id }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("found the old error"),
    ]);
    await h.session.prompt("what was the error from last time?");
    expect(h.requests).toHaveLength(2);
    const [plain, project, show] = sentResults(h.requests[1]);
    // The default scope is this session only, as before.
    expect(plain.isError).toBe(false);
    expect(textOf(plain)).toContain("no matches");
    expect(textOf(plain)).not.toContain("session");
    // The project scope finds the first session's output and names the session with its start date.
    expect(project.isError).toBe(false);
    const found = textOf(project);
    expect(found).toContain(`── entry ${first.entryId} · toolResult bash`);
    expect(found).toContain(`session ${first.id} (started ${first.started})`);
    expect(found).toContain(`build failed: ${NEEDLE} in src/queue.ts`);
    // Nothing of another cwd, of a text file or of a damaged file; the skipped files are counted.
    expect(found).not.toContain("FROM-OTHER-PROJECT");
    expect(found).not.toContain("FROM-A-TEXT-FILE");
    expect(found).toMatch(/Skipped 3 files of the session directory/);
    const details = results("context_grep")[1].details as {
      matches: { session: string; entryId: string; current: boolean }[];
      skipped: { damaged: number; otherProject: number };
    };
    // The command (in the assistant's tool call) and its output: both in the first session.
    expect(details.matches.map((m) => m.session)).toEqual([first.id, first.id]);
    expect(details.matches.map((m) => m.current)).toEqual([false, false]);
    expect(details.matches.map((m) => m.entryId)).toContain(first.entryId);
    expect(details.skipped).toEqual({ damaged: 3, otherProject: 1 });
    // The hit's entry id works with its session.
    expect(show.isError).toBe(false);
    expect(textOf(show)).toContain(`entry ${first.entryId} · toolResult bash`);
    expect(textOf(show)).toContain(NEEDLE);
  });

  it("lists the project's sessions and one session's entries", async () => {
    const first = await earlierSession();
    h = await startHarness({ root, defaultSessionDir: true });
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_list_entries", { scope: "project" }),
          fauxToolCall("context_list_entries", { session: first.id }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("listed"),
    ]);
    await h.session.prompt("what did we do before?");
    const [sessions, entries] = sentResults(h.requests[1]);
    expect(sessions.isError).toBe(false);
    const own = h.session.sessionManager.getSessionId();
    expect(textOf(sessions)).toContain(`1. ${own} (this session)`);
    expect(textOf(sessions)).toMatch(
      new RegExp(
        `2\\. ${first.id} · started ${first.started.replace(/[.]/g, "\\.")} · file \\S+\\.jsonl · 4 entries — build the queue module`,
      ),
    );
    expect(entries.isError).toBe(false);
    expect(textOf(entries)).toContain(first.entryId);
    expect(textOf(entries)).toContain("build the queue module");
  });

  it("refuses a path in session, and a project scope switched off in the global settings, even when the project's settings switch it on", async () => {
    const first = await earlierSession();
    mkdirSync(join(root!, "project", ".pi"), { recursive: true });
    writeFileSync(
      join(root!, "project", ".pi", "settings.json"),
      JSON.stringify({ contextLedger: { recall: { crossSession: true } } }),
    );
    h = await startHarness({ root, defaultSessionDir: true });
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_show_entry", { id: first.entryId, session: first.file }),
          fauxToolCall("context_show_entry", { id: first.entryId, session: `../${first.id}` }),
          fauxToolCall("context_list_entries", { session: "..\\x" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("refused"),
    ]);
    await h.session.prompt("read the old session by path");
    const refused = sentResults(h.requests[1]);
    expect(refused.map((r) => r.isError)).toEqual([true, true, true]);
    for (const r of refused) expect(textOf(r)).toContain("not a path");
    expect(refused.map(textOf).join("\n")).not.toContain(NEEDLE);
    await h.dispose();

    h = await startHarness({ root, defaultSessionDir: true, ledgerSettings: { recall: { crossSession: false } } });
    h.script([
      fauxAssistantMessage(
        [
          fauxToolCall("context_grep", { pattern: NEEDLE, literal: true, scope: "project" }),
          fauxToolCall("context_show_entry", { id: first.entryId, session: first.id }),
          fauxToolCall("context_lookup", { question: "what failed last time?", scope: "project" }),
        ],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage("off"),
    ]);
    await h.session.prompt("search the old sessions");
    // No subagent ran: two model calls, and every project call says the scope is off.
    expect(h.requests).toHaveLength(2);
    const off = sentResults(h.requests[1]);
    expect(off.map((r) => r.isError)).toEqual([true, true, true]);
    for (const r of off) expect(textOf(r)).toContain("project scope is switched off");
    expect(off.map(textOf).join("\n")).not.toContain(`${NEEDLE} in`);
  });

  it("context_lookup with scope project: the subagent is offered the scope and finds the earlier session's output", async () => {
    const first = await earlierSession();
    h = await startHarness({ root, defaultSessionDir: true });
    let subagentTools: string | undefined;
    h.script([
      fauxAssistantMessage(
        [fauxToolCall("context_lookup", { question: "What did the build print last time?", scope: "project" })],
        { stopReason: "toolUse" },
      ),
      (context) => {
        // Tool declarations travel in the request's system messages.
        subagentTools = JSON.stringify(context.messages.filter((m) => m.role === "system"));
        return fauxAssistantMessage([fauxToolCall("grep", { pattern: NEEDLE, literal: true, scope: "project" })], {
          stopReason: "toolUse",
        });
      },
      (context) => {
        const result = [...context.messages].reverse().find((m) => m.role === "toolResult")!;
        // The output line (the command's own line comes first, in the assistant's tool call).
        const line =
          textOf(result)
            .split("\n")
            .filter((l) => l.includes(`build failed: ${NEEDLE}`) && l.includes("│ build"))
            .pop() ?? "none";
        return fauxAssistantMessage(`Found in session ${first.id}: ${line.replace(/^.*?│ /, "")}`);
      },
      fauxAssistantMessage("recovered"),
    ]);
    await h.session.prompt("what did the build print last time?");
    expect(h.requests).toHaveLength(4);
    expect(subagentTools).toContain('"scope"');
    const lookup = sentResults(h.requests[3]).find((r) => r.toolName === "context_lookup")!;
    expect(lookup.isError).toBe(false);
    expect(textOf(lookup)).toContain(`Found in session ${first.id}: build failed: ${NEEDLE} in src/queue.ts`);
    // The subagent's raw search stays out of the main conversation.
    expect(JSON.stringify(h.requests[3])).not.toContain("══ session");
  });
});
