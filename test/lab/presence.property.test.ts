// The replay's presence counts against a look from scratch: whatever a row does to its view (pushes, replacements,
// whole-view replacements that keep, repeat, reorder or rebuild messages with the same text), the probes and needed
// items the counts call shown are exactly those some message of the view holds, searched afresh.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { NeededItem } from "../../src/lab/needed.ts";
import { observers, Presence } from "../../src/lab/presence.ts";
import { holds, type Probe, viewText } from "../../src/lab/probes.ts";
import { View, type ViewObserver } from "../../src/lab/view.ts";

const WORDS = ["alpha", "beta", "src/a.ts", "TypeError", "gamma delta", "/p/src/b.ts", "x"];

const probes: Probe[] = [
  { kind: "path", text: "/p/src/a.ts", entryId: "e0", index: 0, forms: ["src/a.ts"] },
  { kind: "error", text: "TypeError", entryId: "e1", index: 1 },
  { kind: "constraint", text: "gamma delta", entryId: "e2", index: 2 },
  { kind: "command", text: "beta\nalpha", entryId: "e3", index: 3 },
  { kind: "path", text: "nowhere", entryId: "e4", index: 4 },
];
const items: NeededItem[] = ["alpha", "src/b.ts", "x", "never"].map((text, index) => ({
  kind: "identifier",
  text,
  first: index,
  firstEntryId: `e${index}`,
  lastUse: index + 1,
  index,
}));

/** A message of a few words, in one of the shapes a view holds (the text is what decides what it shows). */
function message(shape: number, words: readonly number[]): AgentMessage {
  const text = words.map((w) => WORDS[w % WORDS.length]).join(shape % 2 ? "\n" : " ");
  switch (shape % 3) {
    case 0:
      return { role: "user", content: text, timestamp: 0 } as AgentMessage;
    case 1:
      return {
        role: "toolResult",
        toolCallId: "c",
        toolName: "read",
        content: [{ type: "text", text }],
        isError: false,
        timestamp: 0,
      } as AgentMessage;
    default:
      return { role: "compactionSummary", summary: text, tokensBefore: 1, timestamp: 0 } as unknown as AgentMessage;
  }
}

type Op =
  | { kind: "push"; pick: number }
  | { kind: "replaceAt"; at: number; pick: number }
  | { kind: "replaceAll"; picks: number[] }
  | { kind: "rebuild"; keep: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant("push" as const), pick: fc.nat(15) }),
  fc.record({ kind: fc.constant("replaceAt" as const), at: fc.nat(), pick: fc.nat(15) }),
  fc.record({ kind: fc.constant("replaceAll" as const), picks: fc.array(fc.nat(15), { maxLength: 8 }) }),
  fc.record({ kind: fc.constant("rebuild" as const), keep: fc.nat() }),
);

describe("the replay's presence counts", () => {
  it("show exactly the probes and items some message of the view holds, after any changes (from scratch)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat(5), fc.array(fc.nat(10), { maxLength: 4 })), { minLength: 1, maxLength: 16 }),
        fc.array(opArb, { maxLength: 30 }),
        fc.boolean(),
        (shapes, ops, observeFirst) => {
          const pool = shapes.map(([shape, words]) => message(shape, words));
          const presence = new Presence(probes, items);
          const counts = presence.tracker();
          // A second observer beside the counts, as the replay's working set is: both hear every change.
          const heard: AgentMessage[] = [];
          const other: ViewObserver = { added: (m) => heard.push(m), removed: () => heard.pop() };
          const view = new View();
          const joins = observeFirst ? 0 : Math.floor(ops.length / 2);
          const check = () => {
            const shown = (text: string) => view.messages.some((m) => viewText([m]).includes(text));
            expect(probes.map((_, k) => counts.hasProbe(k))).toEqual(
              probes.map((p) => view.messages.some((m) => holds(viewText([m]), p))),
            );
            expect(items.map((item) => counts.hasItem(item))).toEqual(items.map((item) => shown(item.text)));
          };
          ops.forEach((op, k) => {
            if (k === joins) view.observe(observers(other, counts));
            const pick = (p: number) => pool[p % pool.length];
            if (op.kind === "push") view.push(pick(op.pick));
            else if (op.kind === "replaceAt" && view.length) view.replaceAt(op.at % view.length, pick(op.pick));
            else if (op.kind === "replaceAll") view.replaceAll(op.picks.map(pick));
            // A projection's rebuild: new objects with the same text, after an unchanged head.
            else if (op.kind === "rebuild") {
              const keep = view.length ? op.keep % (view.length + 1) : 0;
              view.replaceFrom(
                keep,
                view.messages.slice(keep).map((m) => ({ ...m }) as AgentMessage),
              );
            }
            if (k >= joins) check();
          });
          if (joins >= ops.length) view.observe(observers(other, counts));
          check();
        },
      ),
    );
  });
});
