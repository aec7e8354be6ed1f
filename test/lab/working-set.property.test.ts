// The working set on hand-made sessions: which replaced texts count (at least 8 characters; a never-seen one is a
// miss for every row),
// when a view shows one (verbatim, a quoted line as the text it quotes, whitespace as Pi's edit tool forgives it), the
// worst act, the re-reads a miss forces, and the figures the replay reports for real rows.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES, messageTokens } from "../../src/lab/metrics.ts";
import { replayBranch, replaySession } from "../../src/lab/replay.ts";
import { defaultSettings, type RowFactory, visibleMessages } from "../../src/lab/row.ts";
import { labRow } from "../../src/lab/rows/registry.ts";
import {
  AFTER_ACT,
  measureWorkingSet,
  normalizeWhitespace,
  type RowRequest,
  WorkingSet,
  WorkingSetTally,
  workingText,
} from "../../src/lab/working-set.ts";
import { View } from "../../src/lab/view.ts";
import { renderReport } from "../../src/lab/report/html.ts";
import { totalsOf } from "../../src/lab/results.ts";
import { renderTable } from "../../src/lab/table.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { chars, Ledger } from "./fixtures.ts";
import { runs } from "../support/fast-check.ts";

const CWD = "/home/u/proj";
const FILE = [
  "export function computeAlpha(x: number) {",
  "\treturn x * 2;",
  "}",
  "export const beta = computeAlpha(3);",
].join("\n");

/** The requests of a session, each with the whole history before it (what the no-compaction row sends). */
function fullViews(
  entries: readonly SessionEntry[],
  change: (messages: AgentMessage[], request: number) => AgentMessage[] = (m) => m,
): RowRequest[] {
  const out: RowRequest[] = [];
  const history: AgentMessage[] = [];
  for (const entry of entries) {
    if (entry.type === "message" && entry.message.role === "assistant")
      out.push({ messages: change(history.slice(), out.length) });
    history.push(...visibleMessages(entry));
  }
  return out;
}

/** An assistant step calling `edit` with the given arguments, then its result. */
function edit(l: Ledger, args: Record<string, unknown>): void {
  l.call("Successfully replaced text.", { path: "src/a.ts", ...args }, "edit");
}

/** A digest-like message a strategy wrote (a custom message, as digest's facts are). */
function custom(text: string): AgentMessage {
  return {
    role: "custom",
    customType: "context-ledger/digest",
    content: text,
    display: true,
    timestamp: 0,
  } as unknown as AgentMessage;
}

/** Replace the message holding `needle` by `by`. */
const replacing = (needle: string, by: AgentMessage) => (messages: AgentMessage[]) =>
  messages.map((m) => (workingText(m).includes(needle) && m.role === "toolResult" ? by : m));

describe("which replaced texts count", () => {
  it("an edit whose text the view shows counts as shown; its own call's arguments do not make it seen", () => {
    const l = new Ledger();
    l.user("Double alpha.");
    l.call(FILE, { path: "src/a.ts" });
    edit(l, { oldText: "\treturn x * 2;", newText: "\treturn x * 4;" });
    const set = new WorkingSet(l.entries, CWD);
    expect(set.texts.map((t) => [t.request, t.path, t.seen])).toEqual([[1, `${CWD}/src/a.ts`, true]]);
    expect(measureWorkingSet(l.entries, fullViews(l.entries), CWD)).toMatchObject({
      total: 1,
      visible: 1,
      share: 1,
      misses: 0,
      rereads: { calls: 0 },
    });
  });

  it("an edit whose text the agent never saw is a miss for every row, the ceiling included, and forces no re-read", () => {
    const l = new Ledger();
    l.user("Fix it.");
    l.call(FILE, { path: "src/a.ts" });
    edit(l, { oldText: "\treturn x * 2;", newText: "\treturn x * 4;" });
    edit(l, { oldText: "return computeGamma(7);", newText: "return 1;" });
    const set = new WorkingSet(l.entries, CWD);
    expect(set.texts.map((t) => t.seen)).toEqual([true, false]);
    expect(set.seen).toHaveLength(1);
    // No compaction (the ceiling) shows the seen text and misses the other; the miss costs it nothing.
    expect(measureWorkingSet(l.entries, fullViews(l.entries), CWD)).toEqual({
      total: 2,
      visible: 1,
      share: 0.5,
      misses: 1,
      seen: { total: 1, share: 1 },
      rereads: { calls: 0, readTokens: 0, contextTokens: 0 },
    });
    // A view holding the never-seen text by chance (a strategy's own line) still misses it: the agent never had it.
    const lucky = fullViews(l.entries, (m) => [...m, custom("return computeGamma(7);")]);
    expect(measureWorkingSet(l.entries, lucky, CWD)).toMatchObject({
      total: 2,
      visible: 1,
      misses: 1,
      rereads: { calls: 0 },
    });
    // An empty view misses both, and re-reads only for the one the agent had seen.
    expect(
      measureWorkingSet(
        l.entries,
        fullViews(l.entries, () => []),
        CWD,
      ),
    ).toMatchObject({ total: 2, visible: 0, share: 0, misses: 2, seen: { total: 1, share: 0 }, rereads: { calls: 1 } });
  });

  it("an edit's own replaced text is no sighting: a retry with the same text is not seen through the earlier call", () => {
    const l = new Ledger();
    l.call(FILE, { path: "src/a.ts" });
    edit(l, { oldText: "const gamma = computeGamma(1);", newText: "const gamma = 2;" });
    edit(l, { oldText: "const gamma = computeGamma(1);", newText: "const gamma = 3;" });
    // The first edit's new text is something the agent wrote and saw; a later edit of it counts.
    edit(l, { oldText: "const gamma = 2;", newText: "const gamma = 4;" });
    expect(new WorkingSet(l.entries, CWD).texts.map((t) => [t.text, t.seen])).toEqual([
      ["const gamma = computeGamma(1);", false],
      ["const gamma = computeGamma(1);", false],
      ["const gamma = 2;", true],
    ]);
  });

  it("texts shorter than 8 characters (after trimming) are not counted", () => {
    const l = new Ledger();
    l.call(FILE, { path: "src/a.ts" });
    edit(l, { oldText: "  }\n  ", newText: "" });
    expect(new WorkingSet(l.entries, CWD).texts).toHaveLength(0);
  });

  it("each entry of an edits[] array counts on its own", () => {
    const l = new Ledger();
    l.call(FILE, { path: "src/a.ts" });
    l.call("export const other = 1;\n", { path: "src/b.ts" });
    edit(l, {
      edits: [
        { oldText: "\treturn x * 2;", newText: "\treturn x;" },
        { oldText: "export const other = 1;", newText: "" },
      ],
    });
    const set = new WorkingSet(l.entries, CWD);
    expect(set.seen.map((t) => t.text)).toEqual(["\treturn x * 2;", "export const other = 1;"]);
    // A view that lost b.ts's read but kept a.ts's shows one of the two.
    const views = fullViews(
      l.entries,
      replacing("export const other", custom("- e003 read ok, 1 line: src/b.ts\n  mentions: other")),
    );
    expect(measureWorkingSet(l.entries, views, CWD)).toMatchObject({ total: 2, visible: 1, share: 0.5, misses: 1 });
  });
});

describe("when a view shows a replaced text", () => {
  const session = () => {
    const l = new Ledger();
    l.user("Double alpha.");
    const read = l.call(FILE, { path: `${CWD}/src/a.ts` }).result;
    edit(l, {
      oldText: "export function computeAlpha(x: number) {\n\treturn x * 2;",
      newText: "export function computeAlpha(x: number) {\n\treturn x * 4;",
    });
    return { l, read };
  };

  it("a text a digest hid (it kept the file's names, not its text) is missed, and forces one re-read of the file", () => {
    const { l, read } = session();
    const digest = custom(
      "[context digest #1: older tool steps]\n- e001 read ok, 4 lines: src/a.ts\n  defines: computeAlpha, beta",
    );
    const views = fullViews(l.entries, replacing("computeAlpha", digest));
    const figures = measureWorkingSet(l.entries, views, CWD);
    expect(figures).toMatchObject({ total: 1, visible: 0, share: 0, misses: 1 });
    // The re-read sends the file's read again (its tokens) and the row's context once more (at the cached price).
    const readTokens = messageTokens(visibleMessages(read)[0]);
    const contextTokens = views[1].messages.reduce((s, m) => s + messageTokens(m), 0);
    expect(figures.rereads).toEqual({ calls: 1, readTokens, contextTokens });
  });

  it("a text quoted line by line in a digest counts as the text it quotes", () => {
    const { l } = session();
    const quoted = custom(
      [
        "[context digest #1]",
        "- e001 read ok, 4 lines: src/a.ts",
        "  | export function computeAlpha(x: number) {",
        "  | \treturn x * 2;",
        "  | }",
      ].join("\n"),
    );
    expect(measureWorkingSet(l.entries, fullViews(l.entries, replacing("computeAlpha", quoted)), CWD)).toMatchObject({
      total: 1,
      visible: 1,
    });
    // Only a strategy's own message is unquoted: the same lines in a tool output are the text they show.
    const asOutput = {
      role: "toolResult",
      toolCallId: "x",
      toolName: "read",
      content: [{ type: "text", text: "  | export function computeAlpha(x: number) {\n  | \treturn x * 2;" }],
      isError: false,
    } as unknown as AgentMessage;
    expect(measureWorkingSet(l.entries, fullViews(l.entries, replacing("computeAlpha", asOutput)), CWD)).toMatchObject({
      total: 1,
      visible: 0,
    });
  });

  it("a quoted line cut short shows only its verbatim start", () => {
    const long = `const table = [${chars(300, "1,")}];`;
    const l = new Ledger();
    l.call(long, { path: "src/t.ts" });
    edit(l, { path: "src/t.ts", oldText: long, newText: "const table = [];" });
    const cut = custom(`- e000 read ok, 1 line: src/t.ts\n  | ${long.slice(0, 200)} […${long.length - 200} chars]`);
    expect(measureWorkingSet(l.entries, fullViews(l.entries, replacing("const table", cut)), CWD)).toMatchObject({
      total: 1,
      visible: 0,
    });
  });

  it("a checkpoint's JSON-escaped line counts as the line it escapes", () => {
    const l = new Ledger();
    l.call('<span class="x">Hello there</span>\n', { path: "src/page.html" });
    edit(l, { path: "src/page.html", oldText: '<span class="x">Hello there</span>', newText: "" });
    const summary = {
      role: "compactionSummary",
      summary: `<span n="1">\n[read src/page.html]\n\\${JSON.stringify('<span class="x">Hello there</span>').replace(/</g, "\\u003c")}\n</span>`,
      tokensBefore: 1,
      timestamp: 0,
    } as unknown as AgentMessage;
    expect(measureWorkingSet(l.entries, fullViews(l.entries, replacing("Hello there", summary)), CWD)).toMatchObject({
      total: 1,
      visible: 1,
    });
  });

  it("a file read with other line endings or trailing spaces counts (Pi's edit forgives them); other indentation does not", () => {
    const l = new Ledger();
    l.call("function one() {   \r\n  return 1;\r\n}\r\n", { path: "src/one.ts" });
    edit(l, { path: "src/one.ts", oldText: "function one() {\n  return 1;", newText: "function one() {\n  return 2;" });
    l.call("function two() {\n\treturn 2;\n}\n", { path: "src/two.ts" });
    edit(l, { path: "src/two.ts", oldText: "function two() {\n    return 2;", newText: "" });
    const set = new WorkingSet(l.entries, CWD);
    expect(set.texts.map((t) => [t.path, t.seen])).toEqual([
      [`${CWD}/src/one.ts`, true],
      // The agent wrote spaces where the file has a tab: Pi's edit would not match it, and no view showed it.
      [`${CWD}/src/two.ts`, false],
    ]);
    expect(measureWorkingSet(l.entries, fullViews(l.entries), CWD)).toMatchObject({
      total: 2,
      visible: 1,
      seen: { total: 1 },
      rereads: { calls: 0 },
    });
    expect(normalizeWhitespace("a  \r\nb\t\rc")).toBe("a\nb\nc");
  });

  it("a text the agent wrote itself (a write's content) is seen; the re-read then sends the message that held it", () => {
    const l = new Ledger();
    const written = l.call(
      "Wrote src/n.ts",
      { path: "src/n.ts", content: "export const answer = 42;\n" },
      "write",
    ).call;
    edit(l, { path: "src/n.ts", oldText: "export const answer = 42;", newText: "export const answer = 43;" });
    const figures = measureWorkingSet(
      l.entries,
      fullViews(l.entries, () => []),
      CWD,
    );
    expect(figures).toMatchObject({
      total: 1,
      visible: 0,
      rereads: { calls: 1, readTokens: messageTokens(visibleMessages(written)[0]), contextTokens: 0 },
    });
  });
});

describe("the worst act and the re-reads", () => {
  it("judges each act on the next replaced texts from it on, and takes the lowest share", () => {
    const tally = new WorkingSetTally();
    const text = (request: number, pattern: number) => ({
      request,
      position: request,
      path: `/f${pattern}`,
      text: "",
      pattern,
      seen: true,
      rereadTokens: 100,
    });
    tally.act(0);
    for (let r = 0; r < 12; r++) tally.request(r, [text(r, r)], () => r % 2 === 0, 1000);
    tally.act(10);
    tally.act(20);
    const figures = tally.figures();
    expect(figures).toMatchObject({ total: 12, visible: 6, share: 0.5, misses: 6 });
    // Act 0 sees requests 0..9 (5 of 10 shown); act 10 sees 10 and 11 (1 of 2); act 20 has no edit after it.
    expect(AFTER_ACT).toBe(10);
    expect(figures.minAfterAct).toBe(0.5);
    expect(figures.rereads).toEqual({ calls: 6, readTokens: 600, contextTokens: 6000 });
  });

  it("one re-read per file and request serves every text of that file the request misses", () => {
    const tally = new WorkingSetTally();
    const text = (pattern: number, path: string) => ({
      request: 3,
      position: 9,
      path,
      text: "",
      pattern,
      seen: true,
      rereadTokens: 50,
    });
    tally.request(3, [text(0, "/a"), text(1, "/a"), text(2, "/b")], () => false, 700);
    expect(tally.figures()).toMatchObject({
      total: 3,
      visible: 0,
      rereads: { calls: 2, readTokens: 100, contextTokens: 1400 },
    });
  });
});

describe("in the replay", () => {
  /** Reads of files large enough that digest covers the early ones, then edits of the first file and a small one. */
  function session(): Ledger {
    const l = new Ledger();
    l.user("Refactor the modules.");
    l.call("export const tiny = makeTiny(1);\n", { path: "src/tiny.ts" });
    l.call(`${FILE}\n${chars(9000, "/")}`, { path: "src/a.ts" });
    for (let i = 0; i < 6; i++) l.call(chars(9000, String(i)), { path: `src/m${i}.ts` });
    edit(l, { path: "src/a.ts", oldText: "\treturn x * 2;", newText: "\treturn x * 4;" });
    edit(l, {
      path: "src/tiny.ts",
      oldText: "export const tiny = makeTiny(1);",
      newText: "export const tiny = makeTiny(2);",
    });
    l.say("Done.");
    return l;
  }

  it("reports the working set per row: the ceiling keeps it all, digest loses the file it outlined and keeps the one it quoted", async () => {
    const rows: RowFactory[] = ["none", "digest"].map((id) => (settings) => labRow(id, settings));
    const result = await replaySession(
      { name: "hand", cwd: CWD, entries: session().entries },
      { settings: defaultSettings(128_000), rows, prices: DEFAULT_PRICES },
    );
    expect(result.workingSet).toEqual({ texts: 2, seen: 2 });
    const [none, digest] = result.rows;
    expect(none.workingSet).toMatchObject({ total: 2, visible: 2, share: 1, misses: 0 });
    expect(none.cost.reread.usd).toBe(0);
    expect(digest.compactions).toBeGreaterThan(0);
    // The digest outlines a.ts by its names and quotes tiny.ts (3 lines or fewer) whole.
    expect(digest.workingSet).toMatchObject({ total: 2, visible: 1, misses: 1, rereads: { calls: 1 } });
    expect(digest.workingSet.minAfterAct).toBe(0.5);
    expect(digest.cost.reread.usd).toBeGreaterThan(0);
    expect(digest.cost.usd).toBeCloseTo(
      digest.cost.reread.usd + (digest.cost.units - digest.cost.reread.units) * 3e-6,
      9,
    );
  });

  it("the terminal table, the totals and the report carry both figures, with no compaction as the ceiling", async () => {
    const rows: RowFactory[] = ["none", "digest"].map((id) => (settings) => labRow(id, settings));
    const replayed = await replaySession(
      { name: "hand", cwd: CWD, entries: session().entries },
      { settings: defaultSettings(128_000), rows, prices: DEFAULT_PRICES },
    );
    const totals = totalsOf([replayed]);
    expect(totals[1].workingSet).toEqual(replayed.rows[1].workingSet);
    expect(totals[1].cost.reread).toEqual(replayed.rows[1].cost.reread);
    const table = renderTable(totals).split("\n");
    expect(table[0]).toMatch(/ w\.set +w@act .* re-read \$ +cost \$ /);
    expect(table.find((line) => line.startsWith("no compaction"))).toContain("100% (ceiling)");
    expect(table.find((line) => line.startsWith("digest"))).toMatch(/ 50% +50% /);
    const html = await renderReport(
      {
        v: 1,
        tool: "pi-context-ledger lab",
        input: { kind: "files", paths: [] },
        settings: defaultSettings(128_000),
        prices: DEFAULT_PRICES,
        unavailable: [],
        sessions: [replayed],
        totals,
      },
      "",
    );
    expect(html).toContain("<th title=");
    expect(html).toMatch(/>Working set, shown<\/th>.*>Working set, worst act<\/th>.*>Re-reads \(\$\)<\/th>/s);
    expect(html).toContain("2 replaced texts (2 seen before their edit: the ceiling)");
  });

  it("the pure function and the replay agree on the branch the replay walks", async () => {
    const entries = session().entries;
    const { branch } = replayBranch(entries);
    expect(measureWorkingSet(branch, fullViews(branch), CWD)).toMatchObject({ total: 2, visible: 2 });
  });
});

describe("the replay's running counts (property)", () => {
  /** A session of reads and edits of a few files; edits quote a line of a read file, or a text never shown. */
  const sessionArb = fc.array(
    fc.oneof(
      fc.record({
        kind: fc.constant("read" as const),
        file: fc.integer({ min: 0, max: 2 }),
        lines: fc.array(fc.integer({ min: 0, max: 8 }), { minLength: 1, maxLength: 6 }),
      }),
      fc.record({
        kind: fc.constant("edit" as const),
        file: fc.integer({ min: 0, max: 2 }),
        line: fc.integer({ min: 0, max: 8 }),
        unseen: fc.boolean(),
      }),
      fc.record({ kind: fc.constant("say" as const), line: fc.integer({ min: 0, max: 8 }) }),
    ),
    { minLength: 1, maxLength: 30 },
  );
  const lineText = (file: number, line: number) => `const value${file}_${line} = compute(${line});`;

  function build(
    steps: { kind: string; file?: number; line?: number; lines?: number[]; unseen?: boolean }[],
  ): SessionEntry[] {
    const l = new Ledger();
    l.user("Go.");
    for (const step of steps) {
      if (step.kind === "read")
        l.call(step.lines!.map((n) => lineText(step.file!, n)).join("\n"), { path: `src/f${step.file}.ts` });
      else if (step.kind === "edit")
        edit(l, {
          path: `src/f${step.file}.ts`,
          oldText: step.unseen ? `never shown ${step.line}!` : lineText(step.file!, step.line!),
          newText: "x",
        });
      else l.say(`Line ${step.line}: ${lineText(0, step.line!)}`);
    }
    return l.entries;
  }

  /** A row that, before random requests, drops, masks or reorders messages of its view (every kind of view change). */
  function churnRow(choices: number[], seen: RowRequest[]): RowFactory {
    return () => {
      const view = new View();
      const all: AgentMessage[] = [];
      let request = 0;
      const mask = (m: AgentMessage) => ({ ...m, content: [{ type: "text", text: "[masked]" }] }) as AgentMessage;
      return {
        info: { id: "churn", label: "churn", family: "baseline", note: "" },
        view,
        append(entry: SessionEntry) {
          for (const m of visibleMessages(entry)) {
            all.push(m);
            view.push(m);
          }
        },
        beforeRequest() {
          const choice = choices[request % choices.length];
          let acted = true;
          if (choice === 1 && view.length > 2) view.replaceAll(all.slice(Math.floor(all.length / 2)));
          else if (choice === 2 && view.length > 1)
            view.replaceMany([
              [0, mask(view.messages[0])],
              [view.length - 1, mask(view.messages[view.length - 1])],
            ]);
          else if (choice === 3) view.replaceAll([...all].reverse());
          else if (choice === 4) view.replaceAll(all);
          else acted = false;
          seen.push({ messages: view.messages.slice(), acted });
          request++;
          return acted ? { kind: "churn", tokensBefore: 0, sideCalls: [] } : undefined;
        },
      };
    };
  }

  it("equal the pure function over the views each row sent, and no compaction is the ceiling", async () => {
    await fc.assert(
      fc.asyncProperty(
        sessionArb,
        fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
        async (steps, choices) => {
          const entries = build(steps);
          const seen: RowRequest[] = [];
          const rows: RowFactory[] = [(s) => labRow("none", s), churnRow(choices, seen)];
          const result = await replaySession(
            { name: "p", cwd: CWD, entries },
            { settings: defaultSettings(128_000), rows, prices: DEFAULT_PRICES },
          );
          const [none, churn] = result.rows;
          // Every row has every text as its denominator; the ceiling shows exactly the seen ones, and re-reads none.
          expect(none.workingSet.total).toBe(result.workingSet.texts);
          expect(churn.workingSet.total).toBe(result.workingSet.texts);
          expect(none.workingSet.visible).toBe(result.workingSet.seen);
          expect(none.workingSet.rereads.calls).toBe(0);
          expect(churn.workingSet.visible).toBeLessThanOrEqual(none.workingSet.visible);
          expect(churn.workingSet).toEqual(measureWorkingSet(replayBranch(entries).branch, seen, CWD));
          expect(churn.workingSet.visible).toBeLessThanOrEqual(churn.workingSet.total);
        },
      ),
      // Every run replays the branch through two lab rows and measures the working set again: 60 runs by default.
      { numRuns: runs(0.3) },
    );
  });
});
