// Digest's names in view (`namesInView`) are memoized per message, per content block and per custom entry, across
// digests. Against the plain computation, `namesIn` of every message's whole text, on views that come back as fresh
// copies (a dialogue answer without its reasoning, a custom entry's message built again, an edited copy), asked
// again and again as a long session's digests do.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../../src/log/entries.ts";
import type { ProjectedEntry } from "../../../src/projection/project.ts";
import { entryMessages } from "../../../src/projection/project.ts";
import { withoutReasoning } from "../../../src/projection/ranges.ts";
import { namesIn } from "../../../src/strategies/digest/lines.ts";
import { namesInView } from "../../../src/strategies/digest/plan.ts";
import { codeArb, pathArb, proseArb } from "../../arbitraries/index.ts";

/** A message's whole text as the model sees it, written out independently of the planner. */
function wholeText(message: AgentMessage): string {
  const m = message as unknown as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof m.content === "string") parts.push(m.content);
  else if (Array.isArray(m.content))
    for (const b of m.content as Record<string, unknown>[]) {
      if (b.type === "text") parts.push(String(b.text));
      if (b.type === "thinking") parts.push(String(b.thinking));
      if (b.type === "toolCall") parts.push(JSON.stringify(b.arguments ?? {}));
    }
  for (const key of ["command", "output", "summary"]) if (typeof m[key] === "string") parts.push(m[key] as string);
  return parts.join("\n");
}

function plainNames(view: readonly ProjectedEntry[], targets: ReadonlySet<string>): Set<string> {
  const out = new Set<string>();
  for (const e of view) if (!targets.has(e.sourceEntry.id)) for (const m of e.messages) namesIn(wholeText(m), out);
  return out;
}

const textArb = fc.oneof(proseArb, codeArb, pathArb, fc.string({ maxLength: 40 }));

/** One stored entry of a kind whose projected message is a fresh object or shares parts with the stored one. */
const entryArb = (id: string): fc.Arbitrary<SessionEntry> =>
  fc.oneof(
    textArb.map((text) => message(id, { role: "user", content: text, timestamp: 1 })),
    fc.tuple(textArb, textArb, textArb).map(([thinking, text, arg]) =>
      message(id, {
        role: "assistant",
        content: [
          { type: "thinking", thinking },
          { type: "text", text },
          { type: "toolCall", id: `c${id}`, name: "read", arguments: { path: arg } },
        ],
        timestamp: 1,
      }),
    ),
    fc
      .tuple(textArb, textArb)
      .map(([command, output]) => message(id, { role: "bashExecution", command, output, exitCode: 0, timestamp: 1 })),
    textArb.map(
      (content) =>
        ({
          type: "custom_message",
          id,
          parentId: null,
          timestamp: "2026-01-01T00:00:00.000Z",
          customType: "context-ledger/digest",
          content,
          display: true,
        }) as unknown as SessionEntry,
    ),
  );

function message(id: string, body: Record<string, unknown>): SessionEntry {
  return { type: "message", id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z", message: body } as SessionEntry;
}

/** How a projection shows an entry this time: as stored, without reasoning, or replaced by an edit's text. */
type Shape = "as-is" | "stripped" | "edited";

function project(entry: SessionEntry, shape: Shape, edit: string): ProjectedEntry {
  const messages = entryMessages(entry);
  if (shape === "stripped") return { sourceEntry: entry, messages: messages.map(withoutReasoning), stripped: true };
  if (shape === "edited")
    return { sourceEntry: entry, messages: messages.map((m) => ({ ...m, content: edit }) as AgentMessage) };
  return { sourceEntry: entry, messages };
}

describe("digest's names in view", () => {
  it("equal namesIn of every shown message's text, however often the view is projected again", () => {
    const sessionArb = fc
      .integer({ min: 1, max: 12 })
      .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => entryArb(`e${i}`))));
    const viewsArb = fc.array(
      fc.tuple(
        fc.array(fc.constantFrom<Shape>("as-is", "as-is", "stripped", "edited"), { minLength: 12, maxLength: 12 }),
        fc.array(textArb, { minLength: 12, maxLength: 12 }),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
      ),
      { minLength: 1, maxLength: 5 },
    );
    fc.assert(
      fc.property(sessionArb, viewsArb, (entries, views) => {
        for (const [shapes, edits, covered] of views) {
          const view = entries.map((entry, i) => project(entry, shapes[i], edits[i]));
          const targets = new Set(entries.filter((_, i) => covered[i]).map((e) => e.id));
          expect([...namesInView(view, targets)].sort()).toEqual([...plainNames(view, targets)].sort());
        }
      }),
    );
  });
});
