// Budget awareness end to end: a real AgentSession on the faux provider with Pi's default settings (128k window,
// compaction reserve 16,384, so the threshold is 111,616 and the notice level 0.8 of it). The model reads ~11k-token
// files; the assertions read the session and the requests the provider was sent.
import { afterEach, describe, expect, it } from "vitest";
import {
  fauxAssistantMessage,
  fauxToolCall,
  type AssistantMessage,
  type FauxResponseStep,
  type Message,
} from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { startHarness, userEntryId, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  delete process.env.PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE;
  await h?.dispose();
  h = undefined;
});

const THRESHOLD = 128_000 - 16_384;
const LEVEL = 0.8 * THRESHOLD;
const bigFile = (marker: string) =>
  `${Array.from({ length: 450 }, (_, i) => `${marker} line ${i} `.padEnd(99, ".")).join("\n")}\n`;
const FILES: Record<string, string> = {};
for (let i = 0; i < 18; i++) FILES[`f${i}.txt`] = bigFile(`F${i}-MARK`);

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const isNotice = (e: SessionEntry) =>
  e.type === "custom_message" &&
  e.customType === LedgerType.notice &&
  (e.details as { kind?: string }).kind === "budget";
const notices = () => branch().filter(isNotice) as Extract<SessionEntry, { type: "custom_message" }>[];
const read = (i: number): FauxResponseStep =>
  fauxAssistantMessage([fauxToolCall("read", { path: `f${i}.txt` })], { stopReason: "toolUse" });
const reads = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => read(from + k));
const isNoticeMessage = (m: Message) => m.role === "user" && textOf(m).startsWith("[context budget]");

/** The model folds everything after the user's request into a short summary, in a step of its own. */
const foldWork: FauxResponseStep = () =>
  fauxAssistantMessage(
    [
      fauxToolCall("context_compact", {
        target: userEntryId(h!.session, "read the files"),
        summary: "Read the first files; nothing to keep.",
      }),
    ],
    {
      stopReason: "toolUse",
    },
  );

describe("budget notices e2e", () => {
  it("one hidden notice per crossing, appended after the step's results so the previous request stays a cached prefix", async () => {
    h = await startHarness({ files: FILES });
    // Eight reads cross 0.8 of the threshold; the ninth stays above it without a second notice; then the model folds
    // and reads again until usage crosses a second time.
    h.script([...reads(0, 9), foldWork, ...reads(9, 17), fauxAssistantMessage("done")]);
    const calls = h.faux.state.callCount;
    await h.session.prompt("read the files");
    expect(h.faux.state.callCount - calls).toBe(19); // notices never cost a model call

    const all = notices();
    expect(all).toHaveLength(2);
    const [first, second] = all;
    expect(first.display).toBe(false);
    const details = first.details as { v: number; usage: number; threshold: number; share: number };
    expect(details).toMatchObject({ v: 1, threshold: THRESHOLD, share: 0.8 });
    expect(details.usage).toBeGreaterThanOrEqual(LEVEL);
    expect(details.usage).toBeLessThan(THRESHOLD);
    const content = String(first.content);
    expect(content).toContain(`~${details.usage.toLocaleString("en-US")} tokens`);
    expect(content).toContain("111,616-token point");
    expect(content).toContain("verbatim checkpoint");
    expect(content).toContain("context_compact");
    expect(content).toContain("context_timeline");

    // It sits right after the results of the step that crossed, and that step's request was below the level.
    const path = branch();
    const at = path.indexOf(first);
    expect(path[at - 1].type === "message" && (path[at - 1] as { message: { role: string } }).message.role).toBe(
      "toolResult",
    );
    const crossing = path
      .slice(0, at)
      .reverse()
      .find((e) => e.type === "message" && e.message.role === "assistant")!;
    const reported = (crossing as { message: AssistantMessage }).message.usage;
    expect(reported.input + reported.cacheRead + reported.cacheWrite).toBeLessThan(LEVEL);

    // Appended, never inserted: the next request is the previous one plus the step and the notice, the notice last,
    // and the provider reads the whole previous prompt from its cache.
    const next = h.requests.findIndex((r) => r.some(isNoticeMessage));
    const previous = h.requests[next - 1];
    const request = h.requests[next];
    expect(JSON.stringify(request.slice(0, previous.length))).toBe(JSON.stringify(previous));
    expect(request.slice(previous.length).map((m) => m.role)).toEqual(["assistant", "toolResult", "user"]);
    expect(isNoticeMessage(request[request.length - 1])).toBe(true);
    const answer = path.slice(at).find((e) => e.type === "message" && e.message.role === "assistant") as {
      message: AssistantMessage;
    };
    const promptOfPrevious = (crossing as { message: AssistantMessage }).message.usage;
    expect(answer.message.usage.cacheRead).toBeGreaterThanOrEqual(
      promptOfPrevious.cacheRead + promptOfPrevious.cacheWrite,
    );

    // The second notice came only after the fold brought usage below the level and it crossed again.
    const fold = path.find((e) => e.type === "custom_message" && e.customType === LedgerType.fold)!;
    expect(path.indexOf(fold)).toBeGreaterThan(at);
    expect(path.indexOf(second)).toBeGreaterThan(path.indexOf(fold));
  });

  it("never while a fold is pending: the step that crosses also folds, so only a later crossing is announced", async () => {
    h = await startHarness({ files: FILES });
    // Seven reads stay below the level; the eighth step reads and folds at once (the read pushes usage over it).
    const readAndFold: FauxResponseStep = () =>
      fauxAssistantMessage(
        [
          fauxToolCall("read", { path: "f7.txt" }),
          fauxToolCall("context_compact", {
            target: userEntryId(h!.session, "read the files"),
            summary: "Folded the reading.",
          }),
        ],
        { stopReason: "toolUse" },
      );
    h.script([...reads(0, 7), readAndFold, ...reads(8, 16), fauxAssistantMessage("done")]);
    await h.session.prompt("read the files");

    const path = branch();
    const fold = path.find((e) => e.type === "custom_message" && e.customType === LedgerType.fold)!;
    expect(fold).toBeDefined();
    // At the fold's boundary usage had passed the level: the request of that step plus one ~11k-token result.
    const step = path
      .slice(0, path.indexOf(fold))
      .reverse()
      .find((e) => e.type === "message" && e.message.role === "assistant") as { message: AssistantMessage };
    expect(step.message.usage.totalTokens + 11_000).toBeGreaterThan(LEVEL);
    const all = notices();
    expect(all).toHaveLength(1);
    expect(path.indexOf(all[0])).toBeGreaterThan(path.indexOf(fold) + 1);
  });

  it("the notice follows the configured share, and can be switched off", async () => {
    process.env.PI_CONTEXT_LEDGER_BUDGET_NOTICE_SHARE = "0.5";
    h = await startHarness({ files: FILES });
    h.script([...reads(0, 6), fauxAssistantMessage("done")]);
    await h.session.prompt("read the files");
    const [notice] = notices();
    expect((notice.details as { usage: number; share: number }).share).toBe(0.5);
    expect((notice.details as { usage: number }).usage).toBeLessThan(LEVEL);
    expect((notice.details as { usage: number }).usage).toBeGreaterThanOrEqual(0.5 * THRESHOLD);
    await h.dispose();

    h = await startHarness({ files: FILES, ledgerSettings: { budgetNotice: { enabled: false } } });
    h.script([...reads(0, 9), fauxAssistantMessage("done")]);
    await h.session.prompt("read the files");
    expect(notices()).toHaveLength(0);
  });

  it("with the native strategy the package stays neutral: no notice unless switched on by name", async () => {
    h = await startHarness({ files: FILES, ledgerSettings: { strategy: "native" } });
    h.script([...reads(0, 9), fauxAssistantMessage("done")]);
    await h.session.prompt("read the files");
    expect(notices()).toHaveLength(0);
    await h.dispose();

    h = await startHarness({ files: FILES, ledgerSettings: { strategy: "native", budgetNotice: { enabled: true } } });
    h.script([...reads(0, 9), fauxAssistantMessage("done")]);
    await h.session.prompt("read the files");
    expect(notices()).toHaveLength(1);
    expect(String(notices()[0].content)).toContain("context_compact");
  });
});
