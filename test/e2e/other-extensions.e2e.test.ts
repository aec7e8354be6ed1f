// Living with other extensions: another loaded extension that also returns a compaction (Pi keeps the last one) or
// rewrites the context is named once, at session start, in a warning. Issue 24, item 19.
import { afterEach, describe, expect, it } from "vitest";
import { fauxAssistantMessage } from "@earendil-works/pi-ai";
import type { ExtensionAPI, ExtensionFactory, InlineExtension } from "@earendil-works/pi-coding-agent";
import { startHarness, type Harness } from "./harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.dispose();
  h = undefined;
});

/**
 * Records every notice from session start on. Loaded before ours, so its session_start handler runs first: the
 * harness captures notices only after the session started.
 */
function noticeRecorder(into: { message: string; type?: string }[]): ExtensionFactory {
  return (pi: ExtensionAPI) => {
    pi.on("session_start", (_event, ctx) => {
      ctx.ui.notify = (message: string, type?: "info" | "warning" | "error") => void into.push({ message, type });
    });
  };
}

/** A test-only compactor: it answers every compaction with its own summary. */
const rival: InlineExtension = {
  name: "rival-compactor",
  factory: (pi: ExtensionAPI) => {
    pi.on("session_before_compact", (event) => ({
      compaction: {
        summary: "RIVAL-SUMMARY",
        firstKeptEntryId: event.preparation.firstKeptEntryId,
        tokensBefore: event.preparation.tokensBefore,
      },
    }));
  },
};

const warningsAbout = (notices: { message: string; type?: string }[]) =>
  notices.filter((n) => n.type === "warning" && /other extensions also compact or rewrite/.test(n.message));

describe("other compaction extensions", () => {
  it("names a second compactor once at session start, and the warning says why it matters", async () => {
    const notices: { message: string; type?: string }[] = [];
    h = await startHarness({ extensionsBefore: [noticeRecorder(notices)], extensions: [rival] });
    const warnings = warningsAbout(notices);
    expect(warnings).toHaveLength(1);
    expect(warnings[0].message).toContain('"<inline:rival-compactor>" (session_before_compact)');
    expect(warnings[0].message).toMatch(/Pi keeps the compaction of the last extension that returns one/);
    // Not this package itself, nor the recorder (it handles no competing event).
    expect(warnings[0].message).not.toContain("<inline:1>");
    expect(warnings[0].message).not.toContain("<inline:2>");
    // Once: another session start on the same extension instance (as a resume sends) warns no more.
    const runner = (
      h.session as unknown as {
        _extensionRunner: { emit(event: { type: "session_start"; reason: "resume" }): Promise<unknown> };
      }
    )._extensionRunner;
    await runner.emit({ type: "session_start", reason: "resume" });
    expect(warningsAbout(notices)).toHaveLength(1);
    // The warning is true: the rival's compaction is the one Pi stores.
    // Enough history for Pi's default cut (it keeps the newest ~20,000 tokens).
    h.script([fauxAssistantMessage(`LONG ${"explanation ".repeat(9_000)}`), fauxAssistantMessage("two")]);
    await h.session.prompt("task ONE");
    await h.session.prompt("task TWO");
    await h.session.compact();
    const stored = h.session.sessionManager.getBranch().find((e) => e.type === "compaction");
    expect(stored?.type === "compaction" && stored.summary).toBe("RIVAL-SUMMARY");
  });

  it("names an extension that rewrites the context, and stays quiet when no other extension competes", async () => {
    const notices: { message: string; type?: string }[] = [];
    const rewriter: InlineExtension = {
      name: "context-rewriter",
      factory: (pi: ExtensionAPI) => void pi.on("context", () => undefined),
    };
    h = await startHarness({ extensionsBefore: [noticeRecorder(notices)], extensions: [rewriter] });
    expect(warningsAbout(notices).map((n) => n.message)).toEqual([
      expect.stringContaining('"<inline:context-rewriter>" (context)'),
    ]);
    await h.dispose();
    const quiet: { message: string; type?: string }[] = [];
    h = await startHarness({ extensionsBefore: [noticeRecorder(quiet)] });
    expect(warningsAbout(quiet)).toEqual([]);
  });
});
