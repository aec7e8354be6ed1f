// The size cap on checkpoint spans. Trims in three stages: non-user items oldest first, then long user
// messages to marked prefix stubs oldest first, then the oldest remaining content. Pure: no I/O.
import { escapeLine, neutralizeTags, spanLines, type RenderableSpan } from "./render.ts";
import type { CheckpointSpan, SpanItem } from "./spans.ts";
import { jsonPrefix } from "../shared/signatures.ts";

/** The conversation budget never drops below this many characters. */
export const MIN_CONVERSATION_CHARS = 500;
/** User messages longer than this are shortened in stage 2. */
export const STUB_THRESHOLD_CHARS = 2_000;
/** A shortened user message keeps whole leading lines up to this many characters. */
export const STUB_KEEP_CHARS = 600;

/** What the cap did. */
export interface CapResult {
  spans: RenderableSpan[];
  /** Items removed entirely. */
  removedItems: number;
  /** User items shortened to a stub or cut at the front. */
  shortenedItems: number;
  /** Spans marked trimmed="true". */
  trimmedSpans: number;
  /** Rendered size of the spans section (lines plus newlines, blank separators included). */
  chars: number;
}

/** An item under trimming: the original plus the kept body range. */
interface Working {
  item: SpanItem;
  from: number;
  to: number;
  /** Nothing of the body fits: the head quotes a prefix of the first line instead. */
  prefixOnly: boolean;
  removed: boolean;
  /** `sums[i]`: rendered size of body lines `[0, i)` (escaped as the renderer shows them, newlines included). */
  sums: number[];
}

/**
 * Body sizes per item object, computed once: earlier checkpoints' spans come back as the same objects at every
 * compaction (the planner's branch index reads them once), and stored items are never changed.
 */
const bodySums = new WeakMap<SpanItem, number[]>();

function workingItem(item: SpanItem): Working {
  let sums = bodySums.get(item);
  if (!sums) {
    sums = [0];
    for (const line of item.body) sums.push(sums[sums.length - 1] + escapeLine(line).length + 1);
    bodySums.set(item, sums);
  }
  return { item, from: 0, to: item.body.length, prefixOnly: false, removed: false, sums };
}

function lineChars(lines: readonly string[]): number {
  let total = 0;
  for (const line of lines) total += line.length + 1;
  return total;
}

/** The bracketed part of a head, marked trimmed: `[user ab12] …` -> `[user ab12; trimmed]`. */
function markedHead(head: string): string {
  const close = head.indexOf("]");
  return close < 0 ? `${head} [trimmed]` : `${head.slice(0, close)}; trimmed]`;
}

function headOf(w: Working): string {
  const total = w.item.body.length;
  if (w.prefixOnly) {
    const first = w.item.body[0] ?? "";
    return `${markedHead(w.item.head)} kept none of its ${total} lines; the first (${first.length} chars) begins ${jsonPrefix(first)}`;
  }
  if (w.from === 0 && w.to === total) return w.item.head;
  return `${markedHead(w.item.head)} kept lines ${w.from + 1}-${w.to} of ${total}`;
}

/** Rendered size of an item's own head, per item object (stored items come back at every compaction, unchanged). */
const headChars = new WeakMap<SpanItem, number>();

function workingChars(w: Working): number {
  if (w.removed) return 0;
  const body = w.sums[w.to] - w.sums[w.from];
  if (w.from !== 0 || w.to !== w.item.body.length || w.prefixOnly) return neutralizeTags(headOf(w)).length + 1 + body;
  // An untouched item shows its own head: its size is known from the earlier compactions that capped it.
  let head = headChars.get(w.item);
  if (head === undefined) headChars.set(w.item, (head = neutralizeTags(w.item.head).length));
  return head + 1 + body;
}

/** Skeleton sizes per span object, untrimmed and trimmed (earlier checkpoints' spans come back unchanged too). */
const skeletons = new WeakMap<CheckpointSpan, [number, number]>();

function skeletonOf(span: CheckpointSpan): [number, number] {
  let known = skeletons.get(span);
  if (!known) skeletons.set(span, (known = [skeletonChars(span, false), skeletonChars(span, true)]));
  return known;
}

function skeletonChars(span: CheckpointSpan, trimmed: boolean): number {
  return lineChars(spanLines({ span: { ...span, items: [] }, trimmed })) + 1;
}

function finish(w: Working): SpanItem {
  return { kind: w.item.kind, head: headOf(w), body: w.item.body.slice(w.from, w.to) };
}

/**
 * Trim spans (oldest first) until their rendered size fits `budgetChars` (at least
 * {@link MIN_CONVERSATION_CHARS}). With `budgetChars` of Infinity nothing changes. Every span the cap
 * touches is marked trimmed; a span that was empty to begin with never is.
 */
export function capSpans(spans: readonly CheckpointSpan[], budgetChars: number): CapResult {
  const budget = Math.max(budgetChars, MIN_CONVERSATION_CHARS);
  const working = spans.map((span) => span.items.map(workingItem));
  const trimmed = spans.map(() => false);
  const skeleton = spans.map(skeletonOf);
  let total = 0;
  for (let s = 0; s < spans.length; s++) {
    total += skeleton[s][0];
    for (const w of working[s]) total += workingChars(w);
  }
  let removedItems = 0;
  let shortenedItems = 0;

  const markTrimmed = (s: number) => {
    if (trimmed[s]) return;
    trimmed[s] = true;
    total += skeleton[s][1] - skeleton[s][0];
  };
  /** Apply a change to one item, keeping `total` exact. */
  const change = (s: number, w: Working, mutate: () => void) => {
    const before = workingChars(w);
    mutate();
    total += workingChars(w) - before;
    markTrimmed(s);
  };
  const each = (visit: (s: number, w: Working) => boolean | void) => {
    for (let s = 0; s < working.length; s++) {
      for (const w of working[s]) {
        if (total <= budget) return;
        if (!w.removed && visit(s, w) === false) return;
      }
    }
  };

  // Stage 1: everything that is not a user message, oldest first.
  each((s, w) => {
    if (w.item.kind === "user") return;
    change(s, w, () => (w.removed = true));
    removedItems++;
  });
  // Stage 2: long user messages become marked prefix stubs, oldest first.
  each((s, w) => {
    if (w.item.kind !== "user" || lineChars(w.item.body) <= STUB_THRESHOLD_CHARS) return;
    change(s, w, () => {
      let kept = 0;
      let to = 0;
      while (to < w.item.body.length && kept + w.item.body[to].length + 1 <= STUB_KEEP_CHARS)
        kept += w.item.body[to++].length + 1;
      w.to = to;
      w.prefixOnly = to === 0;
    });
    shortenedItems++;
  });
  // Stage 3: the oldest remaining content goes, a whole item at a time, or the front lines of the last one.
  each((s, w) => {
    const excess = total - budget;
    const keptLines = w.to - w.from;
    if (!w.prefixOnly && keptLines >= 2 && workingChars(w) > excess + 200) {
      const wasWhole = w.from === 0 && w.to === w.item.body.length;
      // The trim note this change adds counts against the budget too.
      const target = budget - (trimmed[s] ? 0 : skeleton[s][1] - skeleton[s][0]);
      change(s, w, () => {
        const start = workingChars(w);
        while (w.to - w.from > 1) {
          w.from++;
          if (total - (start - workingChars(w)) <= target) break;
        }
      });
      if (wasWhole) shortenedItems++;
      if (total <= budget) return false;
    }
    change(s, w, () => (w.removed = true));
    removedItems++;
  });

  const result: RenderableSpan[] = spans.map((span, s) => ({
    span: { ...span, items: working[s].filter((w) => !w.removed).map(finish) },
    trimmed: trimmed[s],
  }));
  return { spans: result, removedItems, shortenedItems, trimmedSpans: trimmed.filter(Boolean).length, chars: total };
}
