// The digest planner keeps its branch lookups, the tool results it judges for superseded outputs and the names in
// view per branch array, brought up to date as the array grows instead of built again at every digest. These
// properties drive one array the way the host's live path and the lab's rows do (appended at the leaf, cut back and
// extended by a `/tree` jump) and compare every answer with the computation from scratch: a fresh copy of the array
// (no index to reuse), or a plain whole-branch computation written out here.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { SessionEntry } from "../../../src/log/entries.ts";
import { entryMessages, type ProjectedEntry, projectBranch } from "../../../src/projection/project.ts";
import { isCompletedAnswer, isDialogue, isFoldable } from "../../../src/projection/ranges.ts";
import { estimateMessagesTokens } from "../../../src/projection/tokens.ts";
import { isToolCheckpoint, LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { BranchFold } from "../../../src/strategies/shared/branch-fold.ts";
import { branchLookup, type DeltaUnit, selectDelta } from "../../../src/strategies/shared/delta.ts";
import { viewFloor } from "../../../src/strategies/shared/view-floor.ts";
import {
  latestEdits,
  pathArgument,
  textBlocks,
  toolCallsOf,
  toolResultOf,
} from "../../../src/strategies/shared/conversation.ts";
import { absolutePath } from "../../../src/strategies/shared/paths.ts";
import { scanStartupReads } from "../../../src/strategies/shared/startup-reads.ts";
import { findSuperseded, type Superseded } from "../../../src/strategies/digest/supersede.ts";
import {
  namesInView,
  rawStepsBound,
  rawTokensBound,
  startupReadIds,
  viewNames,
} from "../../../src/strategies/digest/plan.ts";
import { stepFiles, type WorkStep } from "../../../src/strategies/digest/working-set.ts";
import { exitStatus, mentionedNames, namesIn, splitLines } from "../../../src/strategies/digest/lines.ts";
import { codeArb, ledgerArb, pathArb, proseArb } from "../../arbitraries/index.ts";
import { runs } from "../../support/fast-check.ts";
import { replayLivePath as replay } from "../../support/live-path.ts";

const CWD = "/repo";

/** Some entries of a path, chosen by the seed: the targets of a digest that may or may not reach them. */
function pick(path: readonly SessionEntry[], mask: readonly boolean[], step: number): Set<string> {
  return new Set(path.filter((_, i) => mask[(i + step) % mask.length]).map((e) => e.id));
}

const sessionArb = ledgerArb({ maxCommands: 40, weights: { assistant: 12, user: 3, navigate: 1 } });
const maskArb = fc.array(fc.boolean(), { minLength: 1, maxLength: 9 });

describe("BranchFold", () => {
  it("gives the fold of the whole array, however the array grew, was cut back or was replaced", () => {
    const fold = new BranchFold<string[]>(
      () => [],
      (ids, entry, i) => ids.push(`${i}:${entry.id}`),
    );
    fc.assert(
      fc.property(sessionArb, (ledger) => {
        replay(ledger, (path) => {
          expect(fold.of(path)).toEqual(path.map((e, i) => `${i}:${e.id}`));
          // A copy is another array: folded from its start, and the live one's index is not disturbed.
          expect(fold.of([...path])).toEqual(path.map((e, i) => `${i}:${e.id}`));
        });
      }),
      { numRuns: runs(0.5) },
    );
  });
});

describe("the delta index", () => {
  it("finds what a scan of the branch finds, on a live path and on a fresh copy of it", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), (ledger, salt) => {
        replay(ledger, (path, step) => {
          if (!path.length) return;
          const lookup = branchLookup(path);
          for (const entry of path) expect(lookup.indexOf(entry.id)).toBe(path.findIndex((e) => e.id === entry.id));
          expect(lookup.indexOf("no such id")).toBe(-1);
          const users = path.flatMap((e, i) => (e.type === "message" && e.message.role === "user" ? [i] : []));
          expect(lookup.firstUsers).toEqual(users.slice(0, 2));
          expect(lookup.unique).toBe(new Set(path.map((e) => e.id)).size === path.length);
          const view = projectBranch(path, LEDGER_FACTS).entries;
          const limitId = path[(salt + step) % path.length].id;
          const live = selectDelta(path, limitId, view);
          const fresh = selectDelta([...path], limitId);
          expect(live && { ...live, view: live.view }).toEqual(fresh && { ...fresh, view: fresh.view });
          expect(live?.units.map(unitShape)).toEqual(plainUnits(path, limitId, view));
          const limit = (salt + step) % (path.length + 1);
          expect(rawTokensBound(path, limit)).toBe(plainRawTokens(path, limit));
        });
      }),
      { numRuns: runs(0.25) },
    );
  });
});

describe("the view's floor", () => {
  it("lies at or before every entry the view shows, on a live path and on a fresh copy of it", () => {
    fc.assert(
      fc.property(sessionArb, (ledger) => {
        replay(ledger, (path) => {
          const floor = viewFloor(path, branchLookup(path));
          expect(viewFloor([...path], branchLookup([...path]))).toBe(floor);
          const first = new Map<string, number>();
          path.forEach((e, i) => first.has(e.id) || first.set(e.id, i));
          for (const p of projectBranch(path, LEDGER_FACTS).entries)
            if (p.messages.length) expect(first.get(p.sourceEntry.id)!, p.sourceEntry.id).toBeGreaterThanOrEqual(floor);
        });
      }),
      { numRuns: runs(0.25) },
    );
  });
});

describe("the raw steps of the working-set check", () => {
  it("are the steps read from scratch, on a live path, a copy, and a copy missing one entry", () => {
    fc.assert(
      fc.property(sessionArb, fc.nat(), fc.nat(), (ledger, salt, drop) => {
        replay(ledger, (path, step) => {
          const limit = (salt + step) % (path.length + 1);
          expect(rawStepsBound(path, limit, CWD)).toEqual(plainRawSteps(path, limit, CWD));
          expect(rawStepsBound([...path], limit, CWD)).toEqual(plainRawSteps(path, limit, CWD));
          // The same first entries with other entries after them: a step remembered per entry must not come back.
          const gap = path.filter((_, i) => i !== (drop + step) % Math.max(1, path.length));
          expect(rawStepsBound(gap, limit, CWD)).toEqual(plainRawSteps(gap, limit, CWD));
          expect(rawStepsBound(path, limit, "/elsewhere")).toEqual(plainRawSteps(path, limit, "/elsewhere"));
        });
      }),
      { numRuns: runs(0.25) },
    );
  });
});

type UnitShape = { ordinal: number; entryIds: string[]; tokens: number };

function unitShape(unit: DeltaUnit): UnitShape {
  return { ordinal: unit.ordinal, entryIds: unit.entryIds, tokens: unit.tokens };
}

/**
 * The delta's units walked over the whole interval after the last tool checkpoint's range, entry by entry from the
 * root, as the selection did before it started at the first entry in view (undefined: the limit is not on the path).
 */
function plainUnits(
  path: readonly SessionEntry[],
  limitId: string,
  view: readonly ProjectedEntry[],
): UnitShape[] | undefined {
  const limit = path.findIndex((e) => e.id === limitId);
  if (limit < 0) return undefined;
  const throughId = path.findLast(isToolCheckpoint)?.details?.range.throughId;
  const after = throughId === undefined ? -1 : path.findIndex((e) => e.id === throughId);
  const shown = new Map<string, ProjectedEntry["messages"]>();
  for (const p of view) if (p.messages.length) shown.set(p.sourceEntry.id, p.messages);
  const units: UnitShape[] = [];
  let ordinal = 0;
  let open: { unit: UnitShape; waiting: Set<string> } | undefined;
  for (let i = 0; i <= limit; i++) {
    const entry = path[i];
    if (entry.type === "message" && entry.message.role === "user") ordinal++;
    if (i <= after) continue;
    const technical = isFoldable(entry) && !isDialogue(entry, LEDGER_FACTS) && !isToolCheckpoint(entry);
    const messages = shown.get(entry.id);
    if (!technical) {
      if (isDialogue(entry, LEDGER_FACTS)) open = undefined;
      const head = messages?.[0];
      if (isCompletedAnswer(entry) && head?.role === "assistant") {
        const thinking = head.content.filter((b) => b.type === "thinking");
        const tokens = estimateMessagesTokens([{ ...head, content: thinking }]);
        if (thinking.length) units.push({ ordinal, entryIds: [entry.id], tokens });
      }
      continue;
    }
    if (!messages) continue;
    const role = entry.type === "message" ? entry.message.role : "custom";
    if (!(open && (role === "toolResult" || (role === "custom" && open.waiting.size > 0)))) {
      open = { unit: { ordinal, entryIds: [], tokens: 0 }, waiting: new Set() };
      units.push(open.unit);
    }
    open.unit.entryIds.push(entry.id);
    open.unit.tokens += estimateMessagesTokens(messages);
    const message = entry.type === "message" ? entry.message : messages[0];
    if (role === "assistant") open.waiting = new Set(toolCallsOf(message).map((c) => c.id));
    if (entry.type === "message" && entry.message.role === "toolResult") open.waiting.delete(entry.message.toolCallId);
  }
  return units;
}

/**
 * Index of the entry before the raw tail, found by a scan back from `limit`: the last tool checkpoint's range end, but
 * not before the view's floor (what a compaction cut off is never digested).
 */
function plainTailStart(branch: readonly SessionEntry[], limit: number): number {
  const checkpoint = branch.findLast(isToolCheckpoint);
  const throughId = checkpoint?.details?.range.throughId;
  const last = Math.min(limit, branch.length - 1);
  let start = -1;
  if (throughId !== undefined) for (let i = last; i >= 0 && start < 0; i--) if (branch[i].id === throughId) start = i;
  return Math.max(start, Math.min(viewFloor([...branch], branchLookup([...branch])), last + 1) - 1);
}

/** The raw steps grouped and read from scratch at every call, as the check made them before it remembered them. */
function plainRawSteps(branch: readonly SessionEntry[], limit: number, cwd: string): WorkStep[] {
  const last = Math.min(limit, branch.length - 1);
  const start = plainTailStart(branch, limit);
  const groups: { tokens: number; messages: ReturnType<typeof entryMessages> }[] = [];
  for (let i = start + 1; i <= last; i++) {
    const entry = branch[i];
    if (!isFoldable(entry) || isDialogue(entry, LEDGER_FACTS)) continue;
    if ((entry.type === "message" && entry.message.role === "assistant") || !groups.length)
      groups.push({ tokens: 0, messages: [] });
    const group = groups[groups.length - 1];
    group.tokens += estimateMessagesTokens(entryMessages(entry));
    group.messages.push(...entryMessages(entry));
  }
  return groups.map((g) => ({ tokens: g.tokens, ...stepFiles(g.messages, cwd) }));
}

/** The raw tail's tokens counted entry by entry back from `limit` to where the tail starts. */
function plainRawTokens(branch: readonly SessionEntry[], limit: number): number {
  const start = plainTailStart(branch, limit);
  let total = 0;
  for (let i = Math.min(limit, branch.length - 1); i > start; i--)
    if (isFoldable(branch[i]) && !isDialogue(branch[i], LEDGER_FACTS))
      total += estimateMessagesTokens(entryMessages(branch[i]));
  return total;
}

/** Superseded outputs as the planner judged them before it kept an index: whole-branch passes, written out plainly. */
function plainSuperseded(
  branch: readonly SessionEntry[],
  targets: ReadonlySet<string>,
  cwd: string,
  edits: boolean,
): Map<string, Superseded> {
  const calls = new Map<string, { name: string; args: unknown }>();
  const results: { entryId: string; call?: { name: string; args: unknown }; failed: boolean; text: string }[] = [];
  for (const entry of branch) {
    if (entry.type !== "message") continue;
    for (const call of toolCallsOf(entry.message))
      if (!calls.has(call.id)) calls.set(call.id, { name: call.name, args: call.arguments });
    const result = toolResultOf(entry.message);
    if (result)
      results.push({
        entryId: entry.id,
        call: calls.get(result.toolCallId),
        failed: result.isError,
        text: textBlocks(result.content).join("\n"),
      });
  }
  const out = new Map<string, Superseded>();
  const rangeOf = (args: unknown) => {
    const a = (args ?? {}) as { offset?: unknown; limit?: unknown };
    return a.offset === undefined && a.limit === undefined ? "" : JSON.stringify([a.offset ?? null, a.limit ?? null]);
  };
  results.forEach((r, k) => {
    if (!targets.has(r.entryId) || !r.call || r.failed) return;
    const path = pathArgument(r.call.args);
    if (!path) return;
    const file = absolutePath(path, cwd);
    const later = results.slice(k + 1).filter((l) => {
      const p = l.call && !l.failed ? pathArgument(l.call.args) : undefined;
      return p !== undefined && absolutePath(p, cwd) === file;
    });
    const nearest = (test: (l: (typeof later)[number]) => boolean) => later.find(test)?.entryId;
    const write = nearest((l) => l.call!.name === "write");
    const whole = nearest((l) => l.call!.name === "read" && rangeOf(l.call!.args) === "");
    if (r.call.name === "read") {
      const range = rangeOf(r.call.args);
      const same = range ? nearest((l) => l.call!.name === "read" && rangeOf(l.call!.args) === range) : undefined;
      const by = write ?? whole ?? same;
      if (by) out.set(r.entryId, { by });
    } else if (edits && r.call.name === "edit" && (write ?? whole)) out.set(r.entryId, { by: write ?? whole });
  });
  results.forEach((r, k) => {
    if (r.call?.name === "read" || !targets.has(r.entryId) || out.has(r.entryId) || r.text.length < 80) return;
    const earlier = results.slice(0, k).find((e) => e.call?.name !== "read" && e.text === r.text);
    if (earlier) out.set(r.entryId, { sameAs: earlier.entryId });
  });
  return out;
}

/** A branch of tool steps over a few files, with repeated outputs, ranges, failures and reused call ids. */
const toolBranchArb = fc
  .array(
    fc.record({
      name: fc.constantFrom("read", "read", "write", "edit", "bash", "grep"),
      file: fc.constantFrom("a.ts", "./a.ts", "/repo/a.ts", "b.md", "src/c.ts"),
      range: fc.constantFrom(undefined, { offset: 1 }, { offset: 1, limit: 5 }),
      output: fc.constantFrom("x".repeat(90), "y".repeat(120), "short", `${"z".repeat(79)}\n`, "w".repeat(80)),
      failed: fc.boolean(),
      callId: fc.constantFrom("c1", "c2", undefined),
      answered: fc.boolean(),
    }),
    { maxLength: 30 },
  )
  .map((steps) => {
    const entries: SessionEntry[] = [];
    steps.forEach((s, k) => {
      const callId = s.callId ?? `call${k}`;
      const args = { path: s.file, ...(s.name === "read" ? (s.range ?? {}) : {}) };
      entries.push(
        message(`a${k}`, {
          role: "assistant",
          content: [{ type: "toolCall", id: callId, name: s.name, arguments: args }],
        }),
      );
      if (s.answered)
        entries.push(
          message(`r${k}`, {
            role: "toolResult",
            toolCallId: callId,
            toolName: s.name,
            isError: s.failed && s.name !== "bash",
            content: [{ type: "text", text: s.output }],
          }),
        );
    });
    return entries;
  });

function message(id: string, body: Record<string, unknown>): SessionEntry {
  return {
    type: "message",
    id,
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    message: { timestamp: 1, ...body },
  } as SessionEntry;
}

describe("superseded outputs", () => {
  it("equal the whole-branch judgement at every length of a growing branch", () => {
    fc.assert(
      fc.property(toolBranchArb, maskArb, fc.boolean(), (entries, mask, edits) => {
        const branch: SessionEntry[] = [];
        entries.forEach((entry, step) => {
          branch.push(entry);
          const targets = pick(branch, mask, step);
          const expected = plainSuperseded(branch, targets, CWD, edits);
          expect(findSuperseded(branch, branch.length - 1, targets, CWD, edits)).toEqual(expected);
          expect(findSuperseded([...branch], branch.length - 1, targets, CWD, edits)).toEqual(expected);
        });
      }),
      { numRuns: runs(0.5) },
    );
  });

  it("equal the whole-branch judgement on generated sessions, live and after /tree jumps", () => {
    fc.assert(
      fc.property(sessionArb, maskArb, (ledger, mask) => {
        replay(ledger, (path, step) => {
          const targets = pick(path, mask, step);
          expect(findSuperseded(path, path.length - 1, targets, CWD, true)).toEqual(
            plainSuperseded(path, targets, CWD, true),
          );
        });
      }),
      { numRuns: runs(0.5) },
    );
  });
});

describe("names in view across a branch's digests", () => {
  it("answer as namesInView of each view, and keep what rendering adds apart", () => {
    fc.assert(
      fc.property(sessionArb, maskArb, (ledger, mask) => {
        replay(ledger, (path, step) => {
          // A fresh projection each time, as after a fact: new entry objects, the messages shared where unchanged.
          const view = projectBranch(path, LEDGER_FACTS).entries;
          const targets = pick(path, mask, step);
          const expected = namesInView(view, targets);
          const everything = namesInView(view, new Set());
          const names = viewNames(path, view, targets);
          for (const name of everything) expect(names.has(name), name).toBe(expected.has(name));
          expect(names.has("neverShownAnywhereName")).toBe(false);
          names.add("neverShownAnywhereName");
          expect(names.has("neverShownAnywhereName")).toBe(true);
          // What one digest's rendering added is not shown to the next.
          expect(viewNames(path, view, targets).has("neverShownAnywhereName")).toBe(false);
        });
      }),
      { numRuns: runs(0.25) },
    );
  });
});

/** `namesIn` as the regular expressions state it: runs of name characters, trimmed, and their word parts. */
function plainNamesIn(text: string): string[] {
  const out = new Set<string>();
  for (const match of text.matchAll(/[\w.@~+$/-]+/g)) {
    if (match[0].length > 320) continue;
    const token = match[0].replace(/^[,+-]+/, "").replace(/[.,:;+-]+$/, "");
    out.add(token);
    if (!/^[\w$]+$/.test(token)) for (const part of token.split(/[^\w$]+/)) if (part) out.add(part);
  }
  return [...out];
}

describe("the name scan", () => {
  it("finds what the regular expressions find, in the same order", () => {
    const punctuated = fc.string({
      unit: fc.constantFrom(
        "a",
        "Z",
        "9",
        "_",
        "$",
        ".",
        "@",
        "~",
        "+",
        "/",
        "-",
        ",",
        ":",
        " ",
        "\n",
        "é",
        "\u{1F600}",
      ),
      maxLength: 80,
    });
    const longRun = fc.integer({ min: 300, max: 340 }).map((n) => `x ${"ab/".repeat(n).slice(0, n)} y`);
    fc.assert(
      fc.property(fc.oneof(punctuated, longRun, codeArb, pathArb, proseArb, fc.string()), (text) => {
        expect([...namesIn(text)]).toEqual(plainNamesIn(text));
      }),
    );
  });
});

/** `mentionedNames` as the regular expressions state it: trimmed tokens that are paths or file names, else their structured word parts. */
function plainMentionedNames(text: string): string[] {
  const out = new Set<string>();
  const add = (name: string) => {
    if (name.length >= 4 && name.length <= 80) out.add(name);
  };
  const fileName =
    /^[\w-]+(?:\.[\w-]+)*\.(?:ts|tsx|mts|cts|js|jsx|mjs|cjs|json|md|txt|py|rs|go|java|kt|rb|c|cc|cpp|h|hpp|cs|php|sh|yml|yaml|toml|css|scss|html|sql|lock)$/;
  const structured = /^[A-Za-z_$][\w$]*(?:[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9])[\w$]*$/;
  for (const match of text.matchAll(/[\w.@~+$/-]+/g)) {
    if (match[0].length > 320) continue;
    const token = match[0].replace(/^[,+-]+/, "").replace(/[.,:;+-]+$/, "");
    if ((token.includes("/") && /[A-Za-z]/.test(token)) || fileName.test(token)) add(token);
    else for (const part of token.split(/[^\w$]+/)) if (part.length <= 80 && structured.test(part)) add(part);
  }
  return [...out];
}

describe("the mention scan", () => {
  it("finds what the regular expressions find, in the same order", () => {
    const unit = fc.constantFrom(
      "a",
      "Z",
      "q",
      "9",
      "_",
      "$",
      ".",
      "@",
      "~",
      "+",
      "/",
      "-",
      ",",
      ":",
      " ",
      "\n",
      "é",
      ".ts",
      ".json",
      "\u{1F600}",
    );
    const punctuated = fc.string({ unit, maxLength: 80 });
    const longName = fc
      .tuple(fc.integer({ min: 70, max: 90 }), fc.constantFrom("aB", "a_b", "x/", "a.", "A_"))
      .map(([n, part]) => `x ${part.repeat(n).slice(0, n)} ${part.repeat(n).slice(0, n)}.md y`);
    const longRun = fc.integer({ min: 300, max: 340 }).map((n) => `x ${"aB/".repeat(n).slice(0, n)} y`);
    // Identifier-like words, so camelCase and snake_case edges (a capital or `_` first, second or last) come up often.
    const word = fc.string({ unit: fc.constantFrom("a", "b", "Z", "9", "_", "$"), minLength: 1, maxLength: 9 });
    const words = fc
      .array(fc.tuple(word, fc.constantFrom(" ", ".", "/", "-", "+", ".ts ", "\n")), { maxLength: 8 })
      .map((parts) => parts.map(([w, sep]) => w + sep).join(""));
    fc.assert(
      fc.property(fc.oneof(punctuated, words, longName, longRun, codeArb, pathArb, proseArb, fc.string()), (text) => {
        expect(mentionedNames(text)).toEqual(plainMentionedNames(text));
      }),
    );
  });
});

describe("the exit status", () => {
  it("is read off the last three lines as a split of the whole output reads it", () => {
    const line = fc.oneof(
      fc.constantFrom(
        "Command exited with code 1",
        "Command exited with code -2 ",
        "  Command exited with code 0\r",
        "",
      ),
      fc.string({ unit: fc.constantFrom("a", " ", "\r", "1", "\t"), maxLength: 6 }),
    );
    const output = fc
      .tuple(fc.array(line, { maxLength: 6 }), fc.constantFrom("", "\n", "\r\n", "\n\n"))
      .map(([lines, end]) => lines.join("\n") + end);
    fc.assert(
      fc.property(
        fc.oneof(output, fc.string({ unit: fc.constantFrom("\n", "\r", " ", "a"), maxLength: 8 })),
        (text) => {
          const lines = splitLines(text);
          let expected: number | undefined;
          for (let i = lines.length - 1; i >= Math.max(0, lines.length - 3) && expected === undefined; i--) {
            const match = /^Command exited with code (-?\d+)\s*$/.exec(lines[i].trim());
            if (match) expected = Number(match[1]);
          }
          expect(exitStatus(text)).toBe(expected);
        },
      ),
    );
  });
});

describe("a step's index, scanned in parts", () => {
  it("lists what the joined text lists: the first part's names, then what the second adds", () => {
    const textArb = fc.oneof(codeArb, pathArb, proseArb, fc.string({ maxLength: 60 }));
    fc.assert(
      fc.property(textArb, textArb, (a, b) => {
        const first = mentionedNames(a);
        const seen = new Set(first);
        expect(mentionedNames(`${a}\n${b}`)).toEqual([...first, ...mentionedNames(b).filter((n) => !seen.has(n))]);
        expect(mentionedNames(`${a}\n`)).toEqual(first);
      }),
    );
  });
});

describe("startup reads among a digest's targets", () => {
  it("equal the full scan's, whether or not the targets reach the startup interval", () => {
    fc.assert(
      fc.property(sessionArb, maskArb, fc.boolean(), (ledger, mask, listed) => {
        replay(ledger, (path, step) => {
          // Instruction files naming every file the session reads, so startup reads occur.
          const read = path.flatMap((e) =>
            e.type === "message" ? toolCallsOf(e.message).flatMap((c) => pathArgument(c.arguments) ?? []) : [],
          );
          const contextFiles = listed ? [{ path: `${CWD}/AGENTS.md`, content: read.join("\n") }] : [];
          const targets = pick(path, mask, step);
          const input = {
            branch: path,
            limitId: path.at(-1)?.id ?? "",
            contextWindow: 200_000,
            usageTokens: null,
            cwd: CWD,
            contextFiles,
          };
          const full = scanStartupReads({ branch: path, cwd: CWD, contextFiles, edits: latestEdits(path) });
          const expected = full.reads.map((r) => r.entryId).filter((id) => targets.has(id));
          expect([...startupReadIds(input, targets)].sort()).toEqual([...new Set(expected)].sort());
        });
      }),
      { numRuns: runs(0.5) },
    );
  });
});
