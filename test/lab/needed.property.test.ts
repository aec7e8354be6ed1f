// "Needed later" on hand-made sessions: what the extractor counts, which items an act needs (seen before it,
// used by the agent after it), and the visible and recoverable shares the replay reports for a row.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Finder } from "../../src/lab/finder.ts";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { agentText, extractItems, isNeededAt, messageItems, neededItems } from "../../src/lab/needed.ts";
import { viewText } from "../../src/lab/probes.ts";
import { replaySession } from "../../src/lab/replay.ts";
import { defaultSettings, type Row, type RowFactory, visibleMessages } from "../../src/lab/row.ts";
import { View } from "../../src/lab/view.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { Ledger } from "./fixtures.ts";
import { runs } from "../support/fast-check.ts";

const CWD = "/home/u/proj";
const texts = (text: string) => extractItems(text, CWD).map((i) => `${i.kind}:${i.text}`);

describe("the item extractor", () => {
  it("finds paths, identifiers, error names and codes, and numbers; not plain words or small numbers", () => {
    expect(texts("Read src/lib/parser.ts and /etc/hosts, then ./scripts/run.sh and README.md.")).toEqual([
      "path:src/lib/parser.ts",
      "path:/etc/hosts",
      "path:./scripts/run.sh",
      "path:README.md",
    ]);
    expect(texts(`open ${CWD}/src/a.ts:12:3 and https://example.com/docs/x.html.`)).toEqual([
      "path:src/a.ts",
      "path:https://example.com/docs/x.html",
    ]);
    expect(
      texts("parseConfig calls MAX_LINE_BYTES and session_start; SessionEntry is a type; plain words stay out"),
    ).toEqual([
      "identifier:parseConfig",
      "identifier:MAX_LINE_BYTES",
      "identifier:session_start",
      "identifier:SessionEntry",
    ]);
    expect(texts("TypeError: x is undefined; ENOENT; ERR_MODULE_NOT_FOUND; error TS2345")).toEqual([
      "error:TypeError",
      "error:ENOENT",
      "error:ERR_MODULE_NOT_FOUND",
      "error:TS2345",
    ]);
    expect(texts("commit 5f02f96 on port 8080, version 1.6.0, 42 files, 7 of 9, 0.25 s")).toEqual([
      "identifier:5f02f96",
      "number:8080",
      "number:1.6.0",
      "number:0.25",
    ]);
    // A date-like fraction carries no letter; an identifier inside a path is not counted twice.
    expect(texts("on 12/05/2024 see src/parseConfig.ts")).toEqual(["path:src/parseConfig.ts"]);
  });
});

/**
 * U "Fix src/parser.ts, it throws TypeError"       (0)
 * A read src/parser.ts                              (1)  request 0
 * R "export function parseConfig() {} // line 120"  (2)
 * A bash "npm test"                                 (3)  request 1
 * R "FAIL ... ENOENT"                               (4)
 * A text "introducing freshName"                    (5)  request 2
 * U "go on"                                         (6)
 * A edit src/parser.ts, text uses parseConfig, 120  (7)  request 3
 * R "ok"                                            (8)
 * A bash "npm test" (again)                         (9)  request 4
 * R "pass"                                          (10)
 * A "done"                                          (11) request 5
 */
function session(): Ledger {
  const l = new Ledger();
  l.user("Fix src/parser.ts, it throws TypeError");
  l.call("export function parseConfig() {} // line 120", { path: "src/parser.ts" });
  l.call("FAIL test/parser.test.ts ENOENT", { command: "npm test" }, "bash", true);
  l.say("introducing freshName for later");
  l.user("go on");
  l.call(
    "ok",
    { path: "src/parser.ts", oldText: "parseConfig() {}", newText: "parseConfig() { return 120; }" },
    "edit",
  );
  l.call("pass", { command: "npm test" }, "bash");
  l.say("done");
  return l;
}

describe("needed items", () => {
  it("an item is needed from its first appearance until the agent's last use after it; its own introduction is no use", () => {
    const items = neededItems(session().entries, CWD);
    // TypeError, test/parser.test.ts and ENOENT are never used again; freshName is introduced by the agent and
    // never reused; "npm test" is a command the agent runs twice.
    expect(items.map((i) => [i.kind, i.text, i.first, i.lastUse, i.firstEntryId])).toEqual([
      ["path", "src/parser.ts", 0, 7, "e000"],
      ["identifier", "parseConfig", 2, 7, "e002"],
      ["number", "120", 2, 7, "e002"],
      ["command", "npm test", 3, 9, "e003"],
    ]);
    const at = (p: number) => items.filter((i) => isNeededAt(i, p)).map((i) => i.text);
    expect(at(1)).toEqual(["src/parser.ts"]);
    expect(at(3)).toEqual(["src/parser.ts", "parseConfig", "120"]);
    expect(at(7)).toEqual(["src/parser.ts", "parseConfig", "120", "npm test"]);
    expect(at(9)).toEqual(["npm test"]);
    expect(at(11)).toEqual([]);
  });
});

/** A hand-made row: before request `at` it keeps only the messages `keep` accepts, and leaves its ledger whole. */
function keeping(at: number, keep: (text: string) => boolean, id: string): RowFactory {
  return () => {
    const view = new View();
    const entries: SessionEntry[] = [];
    let request = 0;
    return {
      info: { id, label: id, family: "ours", note: "test row" },
      view,
      append(entry) {
        entries.push(entry);
        for (const m of visibleMessages(entry)) view.push(m);
      },
      beforeRequest() {
        if (request++ !== at) return undefined;
        const tokensBefore = view.tokens;
        view.replaceAll(view.messages.filter((m) => keep(JSON.stringify(m))));
        return { kind: "compaction", tokensBefore, sideCalls: [] };
      },
      ledger: () => entries,
    } satisfies Row;
  };
}

describe("needed later in the replay", () => {
  it("reports, right after each act, the share of needed items the view shows and the share context_grep recovers", async () => {
    const rows = [
      keeping(3, (t) => t.includes("go on"), "forget"),
      keeping(3, (t) => t.includes("go on") || t.includes("parseConfig() {}"), "keep-result"),
      keeping(99, () => true, "never"),
    ];
    const result = await replaySession(
      { name: "hand", cwd: CWD, entries: session().entries },
      { settings: defaultSettings(128_000), rows, prices: DEFAULT_PRICES },
    );
    expect(result.neededItems).toBe(4);
    const [forget, keep, never] = result.rows;
    // Before request 3 (position 7) all four items are needed; "forget" shows none of them.
    expect(forget.actions).toHaveLength(1);
    expect(forget.actions[0].needed).toEqual({ total: 4, visible: 0 });
    expect(forget.neededLater).toMatchObject({ acts: 1, needed: 4, visible: 0, share: 0 });
    // Every item is in the ledger, in the entry where it first appeared.
    expect(forget.neededLater.recoverable).toEqual({ share: 1, found: 4, missing: 4, checked: 4 });
    // Keeping the read's result shows parseConfig and 120.
    expect(keep.neededLater).toMatchObject({ needed: 4, visible: 2, share: 0.5 });
    expect(keep.neededLater.byKind.identifier).toEqual({ needed: 1, visible: 1 });
    expect(keep.neededLater.byKind.path).toEqual({ needed: 1, visible: 0 });
    expect(keep.neededLater.byKind.command).toEqual({ needed: 1, visible: 0 });
    // A row that never acts needs nothing measured.
    expect(never.neededLater).toMatchObject({ acts: 0, needed: 0, share: 1 });
  });
});

describe("the many-pattern finder", () => {
  it("finds every pattern that occurs, overlapping ones and duplicates included", () => {
    const finder = new Finder(["he", "she", "his", "hers", "", "she", "x"]);
    expect([...finder.find("ushers")].sort()).toEqual([0, 1, 3, 5]);
    expect([...finder.find("nothing here")].sort()).toEqual([0]);
    expect([...finder.find("")]).toEqual([]);
    const words = ["src/a.ts", "a.ts", "TypeError", "Error"];
    const f = new Finder(words);
    expect([...f.find("threw TypeError in src/a.ts")].map((i) => words[i]).sort()).toEqual([
      "Error",
      "TypeError",
      "a.ts",
      "src/a.ts",
    ]);
  });

  it("finds exactly the patterns a naive search finds (property: shared prefixes, suffixes, repeats, non-ASCII)", () => {
    // A small alphabet makes patterns share prefixes and suffixes, so transitions and fail links are exercised.
    const alphabet = fc.constantFrom("a", "b", "c", "é", "/", "💡");
    const word = fc.array(alphabet, { minLength: 0, maxLength: 6 }).map((cs) => cs.join(""));
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 30 }),
        fc.array(alphabet, { maxLength: 80 }).map((cs) => cs.join("")),
        (patterns, text) => {
          const finder = new Finder(patterns);
          const naive = patterns.flatMap((p, id) => (p && text.includes(p) ? [id] : []));
          expect([...finder.find(text)].sort((a, b) => a - b)).toEqual(naive);
        },
      ),
      // Cheap, and shared prefixes and suffixes need many small cases to line up: 300 runs by default.
      { numRuns: runs(1.5) },
    );
  });

  it("remembers each message's hits compactly and gives them back exactly, large ids included", () => {
    // 20,000 patterns, so ids need one, two and three bytes in the finder's memo.
    const words = Array.from({ length: 20_000 }, (_, i) => `<w${i}>`);
    const finder = new Finder(words);
    const wanted = [19_999, 0, 127, 128, 16_383, 16_384, 5, 6, 7];
    const message = { role: "user", content: wanted.map((i) => words[i]).join(" "), timestamp: 0 } as AgentMessage;
    const empty = { role: "user", content: "no patterns here", timestamp: 0 } as AgentMessage;
    const sorted = [...wanted].sort((a, b) => a - b);
    expect([...finder.inMessage(message)]).toEqual(sorted);
    expect([...finder.inMessage(empty)]).toEqual([]);
    // Remembered: asked again, after other messages were added, the answer is the same.
    expect([...finder.inMessage(message)]).toEqual(sorted);
    const counts = new Int32Array(words.length);
    for (const m of [empty, message]) finder.tally(m, counts, 1);
    expect([...counts.keys()].filter((i) => counts[i] > 0)).toEqual(sorted);
  });
});

/**
 * neededItems as first written, from scratch: each message's whole view text and whole agent text searched as one
 * string each, items keyed by kind and text.
 */
function neededFromScratch(branch: readonly SessionEntry[], cwd: string) {
  const byKey = new Map<string, { kind: string; text: string; first: number; firstEntryId: string; lastUse: number }>();
  const commands = (m: AgentMessage) => messageItems(m, cwd).filter((i) => i.kind === "command");
  branch.forEach((entry, position) => {
    for (const message of visibleMessages(entry)) {
      if (message.role === "assistant") {
        for (const item of [...extractItems(agentText(message), cwd), ...commands(message)]) {
          const known = byKey.get(`${item.kind}\u0000${item.text}`);
          if (known && known.first < position) known.lastUse = position;
        }
      }
      for (const item of [...extractItems(viewText([message]), cwd), ...commands(message)]) {
        const k = `${item.kind}\u0000${item.text}`;
        if (!byKey.has(k)) byKey.set(k, { ...item, first: position, firstEntryId: entry.id, lastUse: -1 });
      }
    }
  });
  return [...byKey.values()].filter((item) => item.lastUse > item.first);
}

describe("needed items, read part by part", () => {
  it("are those a search of each message's whole joined texts finds (property: shared and nested parts, long tokens)", () => {
    const word = fc.constantFrom(
      "src/a.ts",
      "/home/u/proj/src/b.ts",
      "parseConfig",
      "TypeError",
      "ENOENT",
      "120",
      "1.2.3",
      "abc1234def",
      "x$yZ+q/r",
      "https://e.com/a.",
      "plain",
      "a".repeat(300),
      "src/",
      "npm test",
      "",
    );
    const text = fc.array(word, { maxLength: 5 }).map((ws) => ws.join(" "));
    const lines = fc.array(word, { maxLength: 4 }).map((ws) => ws.join("\n"));
    // Commands from a small set, so that a command run earlier is often run again.
    const command = fc.oneof(text, fc.constantFrom("npm test", "git status", "ls src/a.ts"));
    const block = fc.oneof(
      fc.record({ type: fc.constant("text"), text: fc.oneof(text, lines) }),
      fc.record({ type: fc.constant("thinking"), thinking: text }),
      fc.record({
        type: fc.constant("toolCall"),
        id: fc.constant("c"),
        name: fc.constantFrom("bash", "read", "edit"),
        arguments: fc.record(
          {
            command,
            path: word,
            nested: fc.record({ list: fc.array(text, { maxLength: 2 }), n: fc.nat() }),
            count: fc.nat(),
          },
          { requiredKeys: [] },
        ),
      }),
    );
    const message = fc.oneof(
      fc.array(block, { maxLength: 4 }).map((content) => ({ role: "assistant", content, timestamp: 0 })),
      text.map((content) => ({ role: "user", content, timestamp: 0 })),
      fc.tuple(text, lines).map(([a, b]) => ({
        role: "toolResult",
        toolCallId: "c",
        toolName: "bash",
        content: [
          { type: "text", text: a },
          { type: "text", text: b },
        ],
        isError: false,
        timestamp: 0,
      })),
      fc.tuple(command, lines).map(([run, output]) => ({ role: "bashExecution", command: run, output, timestamp: 0 })),
    );
    fc.assert(
      fc.property(fc.array(message, { maxLength: 14 }), fc.constantFrom("", CWD, "/"), (messages, cwd) => {
        const branch = messages.map(
          (m, i) =>
            ({
              type: "message",
              id: `e${i}`,
              parentId: i ? `e${i - 1}` : null,
              timestamp: "",
              message: m,
            }) as unknown as SessionEntry,
        );
        const items = neededItems(branch, cwd);
        expect(
          items.map(({ kind, text, first, firstEntryId, lastUse }) => ({ kind, text, first, firstEntryId, lastUse })),
        ).toEqual(neededFromScratch(branch, cwd));
        expect(items.map((i) => i.index)).toEqual(items.map((_, i) => i));
      }),
    );
  });
});
