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

/**
 * The items under trimming, all spans' in order, as parallel arrays indexed by position: the kept body range of
 * each, and whether it is removed or quotes only a prefix of its first line. A long session's cumulative summary
 * holds tens of thousands of items and is capped at every checkpoint, so no object is made per item.
 */
interface Working {
  items: SpanItem[];
  /** Kept body lines of item `i`: `[from[i], to[i])`. */
  from: Int32Array;
  to: Int32Array;
  /** REMOVED and PREFIX_ONLY bits. */
  flags: Uint8Array;
  /** `sums[i][k]`: rendered size of item i's body lines `[0, k)` (escaped as the renderer shows them, newlines included). */
  sums: number[][];
}

const REMOVED = 1;
/** Nothing of the body fits: the head quotes a prefix of the first line instead. */
const PREFIX_ONLY = 2;

/**
 * Body sizes per item object, computed once: earlier checkpoints' spans come back as the same objects at every
 * compaction (the planner's branch index reads them once), and stored items are never changed.
 */
const bodySums = new WeakMap<SpanItem, number[]>();

function sumsOf(item: SpanItem): number[] {
  let sums = bodySums.get(item);
  if (!sums) {
    sums = [0];
    for (const line of item.body) sums.push(sums[sums.length - 1] + escapeLine(line).length + 1);
    bodySums.set(item, sums);
  }
  return sums;
}

function workingOf(spans: readonly CheckpointSpan[]): Working {
  const items: SpanItem[] = [];
  for (const span of spans) for (const item of span.items) items.push(item);
  const to = new Int32Array(items.length);
  const sums: number[][] = new Array(items.length);
  for (let i = 0; i < items.length; i++) {
    to[i] = items[i].body.length;
    sums[i] = sumsOf(items[i]);
  }
  return { items, from: new Int32Array(items.length), to, flags: new Uint8Array(items.length), sums };
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

function headOf(w: Working, i: number): string {
  const item = w.items[i];
  const total = item.body.length;
  if (w.flags[i] & PREFIX_ONLY) {
    const first = item.body[0] ?? "";
    return `${markedHead(item.head)} kept none of its ${total} lines; the first (${first.length} chars) begins ${jsonPrefix(first)}`;
  }
  if (w.from[i] === 0 && w.to[i] === total) return item.head;
  return `${markedHead(item.head)} kept lines ${w.from[i] + 1}-${w.to[i]} of ${total}`;
}

/** Rendered size of an item's own head, per item object (stored items come back at every compaction, unchanged). */
const headChars = new WeakMap<SpanItem, number>();

function workingChars(w: Working, i: number): number {
  const flags = w.flags[i];
  if (flags & REMOVED) return 0;
  const item = w.items[i];
  const body = w.sums[i][w.to[i]] - w.sums[i][w.from[i]];
  if (w.from[i] !== 0 || w.to[i] !== item.body.length || flags & PREFIX_ONLY)
    return neutralizeTags(headOf(w, i)).length + 1 + body;
  // An untouched item shows its own head: its size is known from the earlier compactions that capped it.
  let head = headChars.get(item);
  if (head === undefined) headChars.set(item, (head = neutralizeTags(item.head).length));
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

function finish(w: Working, i: number): SpanItem {
  const item = w.items[i];
  return { kind: item.kind, head: headOf(w, i), body: item.body.slice(w.from[i], w.to[i]) };
}

/**
 * Trim spans (oldest first) until their rendered size fits `budgetChars` (at least
 * {@link MIN_CONVERSATION_CHARS}). With `budgetChars` of Infinity nothing changes. Every span the cap
 * touches is marked trimmed; a span that was empty to begin with never is.
 */
export function capSpans(spans: readonly CheckpointSpan[], budgetChars: number): CapResult {
  const budget = Math.max(budgetChars, MIN_CONVERSATION_CHARS);
  const w = workingOf(spans);
  /** Items of span s: positions `starts[s]` up to `starts[s + 1]`. */
  const starts = new Int32Array(spans.length + 1);
  for (let s = 0; s < spans.length; s++) starts[s + 1] = starts[s] + spans[s].items.length;
  const trimmed = spans.map(() => false);
  const skeleton = spans.map(skeletonOf);
  let total = 0;
  for (let s = 0; s < spans.length; s++) {
    total += skeleton[s][0];
    for (let i = starts[s]; i < starts[s + 1]; i++) total += workingChars(w, i);
  }
  let removedItems = 0;
  let shortenedItems = 0;

  const markTrimmed = (s: number) => {
    if (trimmed[s]) return;
    trimmed[s] = true;
    total += skeleton[s][1] - skeleton[s][0];
  };
  /** Apply a change to item i of span s, keeping `total` exact. */
  const change = (s: number, i: number, mutate: () => void) => {
    const before = workingChars(w, i);
    mutate();
    total += workingChars(w, i) - before;
    markTrimmed(s);
  };
  /** `change` that removes the item, without a closure per call: the cumulative summary's old items go at every cap. */
  const remove = (s: number, i: number) => {
    total -= workingChars(w, i);
    w.flags[i] |= REMOVED;
    markTrimmed(s);
    removedItems++;
  };
  const each = (visit: (s: number, i: number) => boolean | void) => {
    for (let s = 0; s < spans.length; s++) {
      for (let i = starts[s]; i < starts[s + 1]; i++) {
        if (total <= budget) return;
        if (!(w.flags[i] & REMOVED) && visit(s, i) === false) return;
      }
    }
  };

  // Stage 1: everything that is not a user message, oldest first.
  each((s, i) => {
    if (w.items[i].kind !== "user") remove(s, i);
  });
  // Stage 2: long user messages become marked prefix stubs, oldest first.
  each((s, i) => {
    const body = w.items[i].body;
    if (w.items[i].kind !== "user" || lineChars(body) <= STUB_THRESHOLD_CHARS) return;
    change(s, i, () => {
      let kept = 0;
      let to = 0;
      while (to < body.length && kept + body[to].length + 1 <= STUB_KEEP_CHARS) kept += body[to++].length + 1;
      w.to[i] = to;
      if (to === 0) w.flags[i] |= PREFIX_ONLY;
    });
    shortenedItems++;
  });
  // Stage 3: the oldest remaining content goes, a whole item at a time, or the front lines of the last one.
  each((s, i) => {
    const excess = total - budget;
    const keptLines = w.to[i] - w.from[i];
    if (!(w.flags[i] & PREFIX_ONLY) && keptLines >= 2 && workingChars(w, i) > excess + 200) {
      const wasWhole = w.from[i] === 0 && w.to[i] === w.items[i].body.length;
      // The trim note this change adds counts against the budget too.
      const target = budget - (trimmed[s] ? 0 : skeleton[s][1] - skeleton[s][0]);
      change(s, i, () => {
        const start = workingChars(w, i);
        while (w.to[i] - w.from[i] > 1) {
          w.from[i]++;
          if (total - (start - workingChars(w, i)) <= target) break;
        }
      });
      if (wasWhole) shortenedItems++;
      if (total <= budget) return false;
    }
    remove(s, i);
  });

  const result: RenderableSpan[] = spans.map((span, s) => {
    const items: SpanItem[] = [];
    for (let i = starts[s]; i < starts[s + 1]; i++) if (!(w.flags[i] & REMOVED)) items.push(finish(w, i));
    return { span: { ...span, items }, trimmed: trimmed[s] };
  });
  return { spans: result, removedItems, shortenedItems, trimmedSpans: trimmed.filter(Boolean).length, chars: total };
}
