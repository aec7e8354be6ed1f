// The fact reader knows no strategy: a record means to the view what the strategy that writes it declares. A made-up
// strategy's record, declared here and nowhere else, is read, placed, protected, listed and restored like the real
// ones, and the registry's declarations are the one catalog the package reads with.
import { describe, expect, it } from "vitest";
import { branchTo } from "../../src/log/branch.ts";
import type { SessionEntry } from "../../src/log/entries.ts";
import { type FactCatalog, LedgerFacts, type StrategyFacts } from "../../src/log/facts.ts";
import { reduceBranch } from "../../src/projection/ledger-state.ts";
import { LiveLedger } from "../../src/projection/live-ledger.ts";
import { projectBranch } from "../../src/projection/project.ts";
import { listActs, planRestore, renderRestored, resolveRestoreTarget } from "../../src/projection/restore.ts";
import { FACT_CATALOG, LEDGER_FACTS } from "../../src/strategies/catalog.ts";
import { PLUGINS } from "../../src/strategies/registry.ts";
import { LedgerBuilder } from "../support/ledger-builder.ts";

const NOTE = "context-ledger/example-note";

/** A strategy that is not in the registry: its one record is an anchored, dialogue-keeping range. */
const exampleFacts: StrategyFacts = {
  ranges: [
    {
      customType: NOTE,
      act: "example",
      placement: "anchored",
      title: (d) => (typeof d.n === "number" ? `note #${d.n}` : "note"),
      names: (d) => (typeof d.n === "number" ? [`note-${d.n}`] : []),
      hides: "tool exchanges",
      leaving: "the note",
    },
  ],
};
const piOnly: StrategyFacts = { piCompaction: "pi" };
const facts = new LedgerFacts([exampleFacts, piOnly]);

/** user, a tool exchange, an answer, then the example record over the exchange, then a later user message. */
function session(): { entries: SessionEntry[]; ids: Record<string, string> } {
  const b = new LedgerBuilder();
  const ask = b.user("look at a");
  const call = b.assistant("", [{ id: "c1", name: "read", args: { path: "a" } }]);
  const result = b.toolResult("c1", "read", "A-BODY");
  const answer = b.assistant("a is fine");
  const note = b.custom(NOTE, "NOTE-TEXT", {
    v: 1,
    n: 1,
    range: { afterId: ask, throughId: result, keepDialogue: true },
  });
  const later = b.user("next");
  return { entries: branchTo(b.entries, b.leaf), ids: { ask, call, result, answer, note, later } };
}

const texts = (entries: readonly SessionEntry[], reader: LedgerFacts) =>
  projectBranch(entries, reader).messages.map((m) => JSON.stringify((m as { content?: unknown }).content));

describe("the fact reader reads what strategies declare", () => {
  it("reads a declared range record as a range fact carrying its declaration, and anything else as none", () => {
    const { entries, ids } = session();
    const fact = facts.read(entries.find((e) => e.id === ids.note)!);
    expect(fact.kind).toBe("range");
    if (fact.kind !== "range") return;
    expect(fact.declaration.placement).toBe("anchored");
    expect(fact.range).toMatchObject({ afterId: ids.ask, throughId: ids.result, keepDialogue: true });
    // Without the declaration the same entry is no fact at all: nothing in src/log knows the record's name.
    const bare = new LedgerFacts([piOnly]);
    expect(bare.read(entries.find((e) => e.id === ids.note)!).kind).toBe("none");
  });

  it("the projection places, protects and hides as the declaration says", () => {
    const { entries, ids } = session();
    const state = reduceBranch(entries, facts);
    expect(state.ranges).toEqual([
      { entryId: ids.note, afterId: ids.ask, throughId: ids.result, keepDialogue: true, anchored: true },
    ]);
    const view = texts(entries, facts).join("\n");
    expect(view).toContain("NOTE-TEXT");
    expect(view).not.toContain("A-BODY");
    expect(view).toContain("a is fine"); // keep-dialogue: the answer stays
    // Anchored: the note sits right after its range's end, before the answer that followed the range.
    const order = projectBranch(entries, facts).entries.map((e) => e.sourceEntry.id);
    expect(order.indexOf(ids.note)).toBe(order.indexOf(ids.result) + 1);
    // The live ledger, handed the same reader, agrees.
    const live = new LiveLedger(facts);
    const byId = new Map(entries.map((e) => [e.id, e] as const));
    live.sync(entries[entries.length - 1].id, (id) => byId.get(id));
    expect(live.view().map((e) => e.sourceEntry.id)).toEqual(order);
  });

  it("restore lists, names and words the act from its declaration", () => {
    const { entries, ids } = session();
    const state = reduceBranch(entries, facts);
    const acts = listActs(entries, state, facts);
    expect(acts.map((a) => [a.kind, a.title, a.names])).toEqual([["example", "note #1", ["note-1"]]]);
    const resolved = resolveRestoreTarget("note-1", entries, state, facts);
    expect(resolved.ok).toBe(true);
    if (!resolved.ok) return;
    const plan = planRestore({ path: entries, state, facts, act: resolved.act, limit: 1e9, newest: false });
    expect(plan.ok).toBe(true);
    if (!plan.ok) return;
    expect(plan.plan.data).toEqual({ v: 1, targetId: ids.note, act: "example" });
    const message = renderRestored(plan.plan, 1e9);
    expect(message).toContain("Note #1 ");
    expect(message).toContain("tool exchanges it hid");
    expect(message).toContain("the note left the context");
  });

  it("the live ledger reads each entry once, as it joins the path, and never again to project or map a request", () => {
    const { entries } = session();
    const reads = new Map<string, number>();
    class Counting extends LedgerFacts {
      override read(entry: SessionEntry) {
        reads.set(entry.id, (reads.get(entry.id) ?? 0) + 1);
        return super.read(entry);
      }
    }
    const live = new LiveLedger(new Counting([exampleFacts, piOnly]));
    const byId = new Map(entries.map((e) => [e.id, e] as const));
    const half = entries[2].id;
    live.sync(half, (id) => byId.get(id));
    live.sync(entries[entries.length - 1].id, (id) => byId.get(id));
    live.view();
    live.requestContext(projectBranch(entries, facts).messages);
    live.estimateViewTokens();
    expect([...reads.keys()]).toEqual(entries.map((e) => e.id));
    expect([...reads.values()].every((n) => n === 1)).toBe(true);
  });

  it("a restore naming an act nobody declares is no fact", () => {
    const entry = {
      type: "custom",
      id: "r1",
      parentId: null,
      timestamp: new Date(0).toISOString(),
      customType: "context-ledger/restore",
      data: { v: 1, targetId: "x", act: "unknown-act" },
    } as SessionEntry;
    expect(facts.read(entry).kind).toBe("none");
    expect(facts.read({ ...entry, data: { v: 1, targetId: "x", act: "example" } } as SessionEntry).kind).toBe(
      "restore",
    );
  });

  it("two strategies declaring one record name, or none standing for Pi's compaction, is refused", () => {
    expect(() => new LedgerFacts([exampleFacts, exampleFacts, piOnly])).toThrow(/declared twice/);
    expect(() => new LedgerFacts([exampleFacts])).toThrow(/Pi's own compaction/);
    const twice: FactCatalog = [piOnly, piOnly];
    expect(() => new LedgerFacts(twice)).toThrow(/two strategies/);
  });

  it("the package reads with exactly the registry's declarations, in registry order", () => {
    expect(FACT_CATALOG).toEqual(PLUGINS.flatMap((s) => (s.records ? [s.records] : [])));
    for (const [i, part] of FACT_CATALOG.entries()) expect(part).toBe(PLUGINS.filter((s) => s.records)[i].records);
    expect(LEDGER_FACTS.piCompaction).toBe(PLUGINS.find((s) => s.records?.piCompaction)?.name);
  });
});
