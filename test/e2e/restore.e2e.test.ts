// Reversible context end to end: a real AgentSession on the faux provider with Pi's default settings (plus the
// strategy a case is about). Every act is undone the way a user or the model would undo it, and the assertions read
// the provider requests: the next request carries the restored messages, byte for byte as they were sent before.
import { rmSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage, fauxToolCall, type Context, type Message } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { isRestoreEntry } from "../../src/log/entries.ts";
import { LedgerType } from "../../src/strategies/catalog.ts";
import { PLANNER_SYSTEM } from "../../src/strategies/planned/model-plan.ts";
import { startHarness, userEntryId, visibleText, type Harness } from "./harness.ts";

let h: Harness | undefined;
const roots: string[] = [];
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");
const branch = (): SessionEntry[] => h!.session.sessionManager.getBranch();
const lastRequest = () => h!.requests[h!.requests.length - 1];
const restores = () => branch().filter(isRestoreEntry);
/** The opening of a fold summary message (the summary text itself also sits in the restored context_compact call). */
const FOLD_TEXT = "[Context compacted: earlier work was folded";
const SUMMARY_PREFIX = "The conversation history before this point was compacted into the following summary:";
const hasSummary = (r: Message[]) => r.some((m) => textOf(m).startsWith(SUMMARY_PREFIX));

/** A ~`kb` KB file of numbered lines that all carry `marker` (Pi's read tool returns up to 50 KB). */
const bigFile = (marker: string, kb = 45) =>
  `${Array.from({ length: kb * 10 }, (_, i) => `${marker} line ${i} `.padEnd(99, ".")).join("\n")}\n`;
const FILES = {
  "a.txt": bigFile("A-MARK"),
  "b.txt": bigFile("B-MARK"),
  "c.txt": bigFile("C-MARK"),
  "d.txt": bigFile("D-MARK"),
};
const read = (path: string) => fauxAssistantMessage([fauxToolCall("read", { path })], { stopReason: "toolUse" });

/** What the user sees from commands: the run is headless, so notices go to Pi's UI context; capture them. */
function captureNotices(harness: Harness): { type: string; message: string }[] {
  const seen: { type: string; message: string }[] = [];
  const runner = (
    harness.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
  )._extensionRunner;
  runner.uiContext.notify = (message, type) => seen.push({ type: type ?? "info", message });
  return seen;
}

/** Four reads of ~11k tokens each in one task, then a short second task: enough history for Pi's default cut. */
async function readingSession(): Promise<void> {
  h!.script([
    read("a.txt"),
    read("b.txt"),
    read("c.txt"),
    read("d.txt"),
    fauxAssistantMessage("read all four"),
    fauxAssistantMessage("second answer"),
  ]);
  await h!.session.prompt("read the four files");
  await h!.session.prompt("second task");
}

/**
 * JSON with sorted keys and without system-message timestamps. Once a `context` handler changes the conversation,
 * Pi puts its current system message back in front, rebuilt (other key order; after a compaction, with the time of
 * the compaction's snapshot). What a provider receives from it, the prompt and the tools, is the same.
 */
function canonical(messages: readonly Message[]): string {
  const plain = messages.map((m) => (m.role === "system" ? { ...m, timestamp: 0 } : m));
  return JSON.stringify(plain, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

/** The request after a restore repeats the last request sent before the act, message for message, as its prefix. */
function expectPrefix(after: Message[], before: Message[]): void {
  expect(canonical(after.slice(0, before.length))).toBe(canonical(before));
}

describe("restore e2e: fold", () => {
  async function foldTaskTwo(): Promise<{ beforeFold: Message[] }> {
    h!.script([fauxAssistantMessage("finished task one")]);
    await h!.session.prompt("task one: KEEP-ONE");
    h!.script([
      fauxAssistantMessage([fauxToolCall("bash", { command: "echo noisy-output-FOLDED" })], { stopReason: "toolUse" }),
      () =>
        fauxAssistantMessage(
          [
            fauxToolCall(
              "context_compact",
              { target: userEntryId(h!.session, "KEEP-ONE"), summary: "SUMMARY-OF-TWO", backupCheckpoint: "pre-fold" },
              { id: "compact-1" },
            ),
          ],
          {
            stopReason: "toolUse",
          },
        ),
      fauxAssistantMessage("after fold"),
    ]);
    await h!.session.prompt("task two: FOLD-ME");
    // The request that carried the step which asked for the fold: the history as it was before the fold.
    const beforeFold = h!.requests[h!.requests.length - 2];
    expect(visibleText(lastRequest())).not.toContain("FOLD-ME");
    return { beforeFold };
  }

  it("the model undoes its own fold with context_restore; the next request of the same run carries the folded messages", async () => {
    h = await startHarness();
    const { beforeFold } = await foldTaskTwo();
    const fold = branch().find((e) => e.type === "custom_message" && e.customType === LedgerType.fold)!;
    h.script([
      fauxAssistantMessage([fauxToolCall("context_restore", { target: fold.id }, { id: "restore-1" })], {
        stopReason: "toolUse",
      }),
      fauxAssistantMessage("restored"),
    ]);
    const calls = h.faux.state.callCount;
    await h.session.prompt("bring task two back");
    expect(h.faux.state.callCount - calls).toBe(2);
    const after = lastRequest();
    expectPrefix(after, beforeFold);
    const seen = visibleText(after);
    expect(seen).toContain("FOLD-ME");
    expect(seen).toContain("noisy-output-FOLDED");
    expect(seen).not.toContain(FOLD_TEXT);
    // The one short message that says what came back is the tool's result.
    const result = after.find((m) => m.role === "toolResult" && m.toolCallId === "restore-1")!;
    expect(textOf(result)).toMatch(
      /Fold .* was undone: the \d+ messages it hid \(~[\d,]+ tokens\) are back in their original place/,
    );
    expect(restores()).toHaveLength(1);
    expect(restores()[0].data).toEqual({ v: 1, targetId: fold.id, act: "fold" });
  });

  it("the user undoes a fold by its backup name; one hidden notice tells the model, and a second restore is refused", async () => {
    h = await startHarness();
    const notices = captureNotices(h);
    const { beforeFold } = await foldTaskTwo();
    await h.session.prompt("/context restore pre-fold");
    expect(restores()).toHaveLength(1);
    h.script([fauxAssistantMessage("ok")]);
    await h.session.prompt("next");
    const after = lastRequest();
    expectPrefix(after, beforeFold);
    expect(visibleText(after)).toContain("noisy-output-FOLDED");
    expect(visibleText(after)).not.toContain(FOLD_TEXT);
    const notice = after.filter((m) => textOf(m).startsWith("[context restored]"));
    expect(notice).toHaveLength(1);
    expect(textOf(after[after.length - 1])).toBe("next");
    expect(textOf(after[after.length - 2])).toBe(textOf(notice[0]));

    await h.session.prompt("/context restore pre-fold");
    expect(restores()).toHaveLength(1);
    expect(notices.at(-1)).toMatchObject({ type: "error" });
    expect(notices.at(-1)!.message).toMatch(/already undone .* twice/);
    // /context and the timeline show the fold as revoked.
    await h.session.prompt("/context");
    expect(notices.at(-1)!.message).toMatch(/fold \S+: revoked by restore \S+/);
  });
});

describe("restore e2e: compactions", () => {
  it("checkpoint: /compact, then /context restore last; the next request starts with the pre-compaction request, no model call for either", async () => {
    h = await startHarness({ files: FILES });
    await readingSession();
    const beforeCompaction = lastRequest();
    const calls = h.faux.state.callCount;
    await h.session.compact();
    const [compaction] = branch().filter((e) => e.type === "compaction");
    expect((compaction as { details?: { strategy?: string } }).details?.strategy).toBe("checkpoint");
    await h.session.prompt("/context restore last");
    expect(h.faux.state.callCount).toBe(calls);
    expect(restores()[0].data).toEqual({ v: 1, targetId: compaction.id, act: "compaction" });

    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after restore");
    const after = lastRequest();
    expectPrefix(after, beforeCompaction);
    expect(hasSummary(after)).toBe(false);
    expect(visibleText(after)).toContain("A-MARK line 0 ");
    // No recap for a compaction that no longer applies.
    expect(after.some((m) => textOf(m).startsWith("[context-ledger recap"))).toBe(false);
    expect(textOf(after[after.length - 1])).toBe("after restore");
  });

  it("planned: the planner's compaction is undone and the deleted lines come back", async () => {
    h = await startHarness({ files: FILES, ledgerSettings: { strategy: "planned" } });
    await readingSession();
    const beforeCompaction = lastRequest();
    const isPlanner = (c: Context) =>
      (c.systemPrompt ?? "").includes(PLANNER_SYSTEM) || c.messages.map(textOf).join("\n").includes("\n<transcript>\n");
    // The planner deletes every numbered line of a.txt except its first ten.
    h.script([
      (context: Context) => {
        expect(isPlanner(context)).toBe(true);
        const numbers = context.messages
          .map(textOf)
          .join("\n")
          .split("\n")
          .flatMap((line) => /^(\d+)\| .*A-MARK line/.exec(line)?.[1] ?? [])
          .map(Number);
        return fauxAssistantMessage(`\`\`\`\n${Math.min(...numbers) + 10},${Math.max(...numbers)}\n\`\`\``);
      },
    ]);
    await h.session.compact();
    const [compaction] = branch().filter((e) => e.type === "compaction");
    expect((compaction as { details?: { strategy?: string } }).details?.strategy).toBe("planned");
    h.script([fauxAssistantMessage("compacted")]);
    await h.session.prompt("while compacted");
    expect(visibleText(lastRequest())).not.toContain("A-MARK line 300 ");

    await h.session.prompt(`/context restore ${compaction.id}`);
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after restore");
    const after = lastRequest();
    expectPrefix(after, beforeCompaction);
    expect(visibleText(after)).toContain("A-MARK line 300 ");
    expect(hasSummary(after)).toBe(false);
  });

  it("preserve: /compact summarizes the tool traffic; `last` skips the marker compaction and restores the tool summary, whose text leaves", async () => {
    h = await startHarness({ files: FILES, ledgerSettings: { strategy: "preserve" } });
    await readingSession();
    const beforeCheckpoint = lastRequest();
    h.script([
      fauxAssistantMessage(
        "## Tool Context\n### User message 1\n#### Findings\n- READ-FOUR-FILES\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)",
      ),
    ]);
    await h.session.compact();
    const checkpoint = branch().find((e) => e.type === "custom_message" && e.customType === LedgerType.preserve)!;
    expect(checkpoint).toBeDefined();
    // Manual /compact ends as a success: Pi appended the marker compaction after the checkpoint, the newest "act" by
    // position, but it hides nothing, so `last` names the checkpoint.
    const marker = branch().at(-1)!;
    expect(marker.type === "compaction" && marker.details).toMatchObject({ strategy: "preserve" });
    h.script([fauxAssistantMessage("checkpointed")]);
    await h.session.prompt("while checkpointed");
    expect(visibleText(lastRequest())).not.toContain("A-MARK");

    await h.session.prompt("/context restore last");
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after restore");
    const after = lastRequest();
    expectPrefix(after, beforeCheckpoint);
    expect(visibleText(after)).toContain("A-MARK line 0 ");
    expect(visibleText(after)).not.toContain("READ-FOUR-FILES");
    expect(restores()[0].data).toEqual({ v: 1, targetId: checkpoint.id, act: "preserve" });
  });

  it("after a threshold compaction, a restore that would not fit is refused with the figures; --newest brings back the newest part", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 10; i++) files[`f${i}.txt`] = bigFile(`F${i}-MARK`);
    h = await startHarness({ files });
    const notices = captureNotices(h);
    h.script([...Array.from({ length: 10 }, (_, i) => read(`f${i}.txt`)), fauxAssistantMessage("read them all")]);
    await h.session.prompt("read the ten files");
    const [compaction] = branch().filter((e) => e.type === "compaction");
    expect(compaction).toBeDefined(); // Pi's threshold (window - 16,384) was passed on the way

    await h.session.prompt("/context restore last");
    expect(restores()).toHaveLength(0);
    expect(notices.at(-1)!.type).toBe("error");
    expect(notices.at(-1)!.message).toMatch(
      /take the context from ~[\d,]+ to ~[\d,]+ tokens, above the limit of 111,616\. Nothing was restored\. Run \/context restore last --newest/,
    );

    await h.session.prompt("/context restore last --newest");
    const [fact] = restores();
    expect(fact.data).toMatchObject({
      v: 1,
      targetId: compaction.id,
      act: "compaction",
      firstKeptEntryId: expect.any(String),
    });
    expect(notices.at(-1)!.message).toMatch(/newest part of checkpoint compaction .* The older part stays hidden/);
    // The files read between the new start and the old cut are what comes back.
    const ids = branch().map((e) => e.id);
    const from = ids.indexOf((fact.data as { firstKeptEntryId: string }).firstKeptEntryId);
    const cut = ids.indexOf((compaction as { firstKeptEntryId: string }).firstKeptEntryId);
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(cut);
    const back = branch()
      .slice(from, cut)
      .flatMap((e) =>
        e.type === "message" && e.message.role === "toolResult"
          ? [/F\d-MARK/.exec(textOf(e.message as Message))![0]]
          : [],
      );
    expect(back.length).toBeGreaterThan(0);
    const compacted = visibleText(lastRequest());
    h.script([fauxAssistantMessage("resumed")]);
    await h.session.prompt("after restore");
    const after = visibleText(lastRequest());
    expect(hasSummary(lastRequest())).toBe(true); // the older part stays compacted
    expect(after).not.toContain("F0-MARK line 300 ");
    for (const marker of back) {
      expect(compacted).not.toContain(`${marker} line 300 `);
      expect(after).toContain(`${marker} line 300 `);
    }
    // Pi reports the usage of that request: still below the threshold.
    const usage = h.session.getContextUsage();
    expect(usage?.tokens ?? 0).toBeLessThan(111_616);
  });
});

describe("restore e2e: reload", () => {
  it("after a restore, reopening the session file gives the identical next request", async () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-restore-"));
    roots.push(root);
    h = await startHarness({ files: FILES, persist: true, root });
    await readingSession();
    await h.session.compact();
    await h.session.prompt("/context restore last");
    h.script([fauxAssistantMessage("live")]);
    await h.session.prompt("NEXT-INPUT");
    const live = lastRequest();
    const file = h.sessionFile()!;
    await h.dispose();

    // Reopen at the same point: branch back to before the last prompt and send it again.
    h = await startHarness({ sessionFile: file, root });
    const userEntry = branch().find(
      (e) => e.type === "message" && e.message.role === "user" && textOf(e.message as Message) === "NEXT-INPUT",
    )!;
    h.session.sessionManager.branch(userEntry.parentId!);
    h.script([fauxAssistantMessage("reloaded")]);
    await h.session.prompt("NEXT-INPUT");
    const reloaded = lastRequest();
    const untimed = (r: Message[]) => canonical(r.map((m) => ({ ...m, timestamp: 0 }) as Message));
    expect(untimed(reloaded)).toBe(untimed(live));
    expect(hasSummary(reloaded)).toBe(false);
  });
});

describe("restore e2e: a preserve marker after a restored compaction", () => {
  it("the marker keeps from where the view starts, so Pi's own projection also holds the restored history", async () => {
    const root = mkdtempSync(join(tmpdir(), "ctx-ledger-restore-"));
    roots.push(root);
    // A checkpoint compaction undone under the default strategy; the user then reopens the session under preserve.
    h = await startHarness({ files: FILES, persist: true, root });
    await readingSession();
    await h.session.compact();
    await h.session.prompt("/context restore last");
    const file = h.sessionFile()!;
    await h.dispose();

    h = await startHarness({ sessionFile: file, root, ledgerSettings: { strategy: "preserve" } });
    h.script([
      fauxAssistantMessage(
        "## Tool Context\n### User message 1\n#### Findings\n- READ-FOUR-FILES\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)",
      ),
    ]);
    await h.session.compact();
    const marker = branch().at(-1)!;
    expect(marker.type === "compaction" && marker.details).toMatchObject({ strategy: "preserve" });
    // The view starts at the first entry again (the compaction is revoked), and so does the marker's cut.
    expect(marker.type === "compaction" && marker.firstKeptEntryId).toBe(branch()[0].id);
    const own = h.session.sessionManager.buildSessionContext().messages;
    expect(own.some((m) => m.role === "user" && textOf(m as Message) === "read the four files")).toBe(true);

    h.script([fauxAssistantMessage("after the marker")]);
    await h.session.prompt("NEXT-INPUT");
    const request = lastRequest();
    expect(hasSummary(request)).toBe(false);
    expect(request.some((m) => m.role === "user" && textOf(m) === "read the four files")).toBe(true);
    expect(visibleText(request)).toContain("READ-FOUR-FILES");
    expect(visibleText(request)).not.toContain("A-MARK");
  });
});
