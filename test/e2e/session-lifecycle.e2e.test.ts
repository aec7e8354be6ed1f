// Session lifecycle end to end on a real AgentSession (faux provider): multi-turn work with parallel tool
// calls, `/compact` under the `native` strategy (Pi summarizes, we stay out of the way), and reload of a
// file-backed session, which must produce exactly the request an uninterrupted session would send.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { buildSessionProjection, convertToLlm, type SessionEntry } from "@earendil-works/pi-coding-agent";
import { branchTo } from "../../src/log/branch.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { answeredCallIds, pairingViolations } from "../properties/tool-pairing.ts";
import { startHarness, type Harness } from "./harness.ts";
import { LEDGER_FACTS } from "../../src/strategies/catalog.ts";

const open: Harness[] = [];
const roots: string[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.dispose();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

async function start(options: Parameters<typeof startHarness>[0]): Promise<Harness> {
  const h = await startHarness(options);
  open.push(h);
  return h;
}

const nonSystem = (messages: Message[]) => messages.filter((m) => m.role !== "system");
const bytes = (file: string | undefined): Buffer => (file && existsSync(file) ? readFileSync(file) : Buffer.alloc(0));

/** Asserts the session file only grew since `before`, and returns the new bytes. */
function expectAppendOnly(before: Buffer, h: Harness, what: string): Buffer {
  const after = bytes(h.sessionFile());
  expect(after.length, `${what} shrank the session file`).toBeGreaterThanOrEqual(before.length);
  expect(after.subarray(0, before.length).equals(before), `${what} rewrote earlier bytes`).toBe(true);
  return after;
}

const readBoth = () => [
  fauxAssistantMessage([fauxToolCall("read", { path: "a.txt" }), fauxToolCall("read", { path: "b.txt" })], {
    stopReason: "toolUse",
  }),
  fauxAssistantMessage("both files read"),
];

describe("session lifecycle e2e", () => {
  it("multi-turn session with parallel tool calls: paired requests, neutral projection, append-only file", async () => {
    const h = await start({
      persist: true,
      files: { "a.txt": "alpha-CONTENT\n", "b.txt": "beta-CONTENT\n", "c.txt": "gamma-CONTENT\n" },
    });
    h.script([
      ...readBoth(),
      fauxAssistantMessage(
        [fauxToolCall("read", { path: "c.txt" }), fauxToolCall("bash", { command: "echo parallel-BASH" })],
        { stopReason: "toolUse" },
      ),
      fauxAssistantMessage([fauxToolCall("read", { path: "missing.txt" })], { stopReason: "toolUse" }),
      fauxAssistantMessage("third turn done"),
    ]);
    let file = bytes(h.sessionFile());
    await h.session.prompt("turn one: read a and b");
    file = expectAppendOnly(file, h, "turn one");
    await h.session.prompt("turn two: read c, run bash, then a missing file");
    file = expectAppendOnly(file, h, "turn two");

    expect(h.requests).toHaveLength(5);
    expect(nonSystem(h.requests[1]).map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "toolResult"]);
    const last = h.requests[4];
    expect(nonSystem(last).map((m) => m.role)).toEqual([
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
      "user",
      "assistant",
      "toolResult",
      "toolResult",
      "assistant",
      "toolResult",
    ]);
    const seen = JSON.stringify(last);
    for (const needle of ["alpha-CONTENT", "beta-CONTENT", "gamma-CONTENT", "parallel-BASH"])
      expect(seen).toContain(needle);
    const missing = last.filter((m) => m.role === "toolResult").at(-1)!;
    expect(missing.role === "toolResult" && missing.isError).toBe(true);

    const branch = h.session.sessionManager.getBranch();
    for (const request of h.requests) expect(pairingViolations(request, answeredCallIds(branch))).toEqual([]);
    // With no ledger facts our projection is Pi's, and the provider saw exactly that.
    const entries = h.session.sessionManager.getEntries();
    const leaf = h.session.sessionManager.getLeafId();
    const ours = projectBranch(branchTo(entries, leaf), LEDGER_FACTS).messages;
    expect(ours).toEqual(buildSessionProjection(entries, leaf).messages);
    // The last request was built before its answer was appended: drop the final assistant message.
    expect(nonSystem(convertToLlm(ours.slice(0, -1)))).toEqual(nonSystem(last));
  });

  it("/compact with strategy native: Pi's summarizer runs and the compaction carries no ledger details", async () => {
    const h = await start({
      persist: true,
      ledgerSettings: { strategy: "native" },
      settings: { compaction: { enabled: false, keepRecentTokens: 1 } },
      files: { "a.txt": "alpha\n", "b.txt": "beta\n" },
    });
    h.script([...readBoth(), fauxAssistantMessage("second answer")]);
    await h.session.prompt("first task OLD-TURN");
    await h.session.prompt("second task RECENT-TURN");
    let file = bytes(h.sessionFile());

    // Pi may summarize the history and a split turn's prefix concurrently: answer by what is asked.
    const summaryRequests: string[] = [];
    const summarizer = () => (context: { messages: Message[] }) => {
      const request = JSON.stringify(context.messages);
      summaryRequests.push(request);
      return fauxAssistantMessage(
        request.includes("structured context checkpoint summary") ? "## Goal\nNATIVE-SUMMARY-TEXT" : "turn prefix",
      );
    };
    h.script([summarizer(), summarizer()]);
    const requestsBefore = h.requests.length;
    await h.session.compact();
    file = expectAppendOnly(file, h, "/compact");

    // Pi's own summarization prompt reached the provider, with the old turn to summarize.
    expect(h.requests.length).toBeGreaterThan(requestsBefore);
    const history = summaryRequests.find((r) => r.includes("structured context checkpoint summary"));
    expect(history).toBeDefined();
    expect(history).toContain("OLD-TURN");
    h.faux.setResponses([]);

    const compactions = h.session.sessionManager
      .getEntries()
      .filter((e): e is Extract<SessionEntry, { type: "compaction" }> => e.type === "compaction");
    expect(compactions).toHaveLength(1);
    const [compaction] = compactions;
    expect(compaction.summary).toContain("NATIVE-SUMMARY-TEXT");
    expect(compaction.fromHook).toBeFalsy();
    const details = (compaction.details ?? {}) as Record<string, unknown>;
    expect(details.v).toBeUndefined();
    expect(details.strategy).toBeUndefined();
    expect(
      h.session.sessionManager
        .getEntries()
        .some(
          (e) => (e.type === "custom" || e.type === "custom_message") && e.customType.startsWith("context-ledger/"),
        ),
    ).toBe(false);

    // The next request starts from Pi's summary.
    h.script([fauxAssistantMessage("after compaction")]);
    await h.session.prompt("third task");
    expectAppendOnly(file, h, "the prompt after /compact");
    const next = JSON.stringify(h.requests.at(-1));
    expect(next).toContain("NATIVE-SUMMARY-TEXT");
    expect(next).toContain("third task");
  });

  it("reloading a file-backed session yields the identical next request", async () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-reload-"));
    roots.push(root);
    const files = { "a.txt": "alpha\n", "b.txt": "beta\n" };
    const first = await start({ persist: true, root, files });
    first.script(readBoth());
    await first.session.prompt("read both files");
    const sessionFile = first.sessionFile()!;
    // Snapshot the session as it is between turns, then continue without interruption.
    const snapshot = join(root, "snapshot.jsonl");
    copyFileSync(sessionFile, snapshot);
    first.script([fauxAssistantMessage("continued")]);
    await first.session.prompt("NEXT-PROMPT");
    const uninterrupted = first.requests.at(-1)!;
    await first.dispose();
    open.splice(open.indexOf(first), 1);

    // Reload the snapshot in the same sandbox (same cwd and agent dir) and send the same prompt.
    const snapshotBytes = readFileSync(snapshot);
    const second = await start({ sessionFile: snapshot, root, files });
    second.script([fauxAssistantMessage("continued")]);
    await second.session.prompt("NEXT-PROMPT");
    const reloaded = second.requests.at(-1)!;
    expectAppendOnly(snapshotBytes, second, "resume and prompt");

    // Identical except the new user message's clock reading.
    const stripLastUserTime = (messages: Message[]) =>
      messages.map((m, i) => (i === messages.length - 1 && m.role === "user" ? { ...m, timestamp: 0 } : m));
    expect(reloaded.at(-1)?.role).toBe("user");
    expect(stripLastUserTime(reloaded)).toEqual(stripLastUserTime(uninterrupted));
  });
});
