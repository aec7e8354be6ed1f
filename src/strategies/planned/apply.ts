// Deterministic application of a ranked deletion plan to the numbered transcript: validation, protection,
// the retention target and floor, and rendering with markers. Pure: no I/O.
import { CHARS_PER_TOKEN, estimateTextTokens } from "../../projection/tokens.ts";
import { PlanError } from "../shared/fallback.ts";
import {
  INTRO,
  isProtected,
  markerCount,
  markerLength,
  markerText,
  type LineKind,
  type TranscriptLine,
} from "./transcript.ts";

/** One ranked deletion record: lines `from` through `to`, 1-based, inclusive. */
export interface PlanRange {
  from: number;
  to: number;
}

/** Retention settings. */
export interface RetentionOptions {
  /** Share of the compactable region to keep (0..1). */
  retainRatio: number;
  /** Never keep fewer estimated tokens than this. */
  minRetainedTokens: number;
  /** Compact only when it saves at least this many estimated tokens. */
  minSavedTokens: number;
}

export const DEFAULT_RETENTION: RetentionOptions = {
  retainRatio: 0.5,
  minRetainedTokens: 8_000,
  minSavedTokens: 2_048,
};

/** What applying a plan produced. */
export interface AppliedPlan {
  /** INTRO, then surviving lines byte for byte, with one marker per removed run. */
  summary: string;
  /** Kinds of the summary's lines after the intro. */
  kinds: LineKind[];
  /** The summary's lines after the intro (see {@link render}). */
  body: TranscriptLine[];
  regionTokens: number;
  targetTokens: number;
  keptTokens: number;
  /** Source lines removed by this plan (prior markers' counts not included). */
  removedLines: number;
  pinnedLines: number;
  proposedRanges: number;
  appliedRanges: number;
  /** True when the last applied range was cut short at the target. */
  trimmed: boolean;
}

/**
 * Check a plan's shape: every range inside 1..lineCount and not reversed, else the whole plan is rejected (the text
 * form is all or nothing). Exact duplicates collapse at their first rank. Overlapping ranges are kept: applying them in
 * rank order merges them, each one removing only what the ranges before it left.
 */
export function validateRanges(ranges: readonly PlanRange[], lineCount: number): PlanRange[] {
  // A range inside the bounds is one number, `from * (lineCount + 1) + to`: no key string per record.
  const keys = new Float64Array(ranges.length);
  for (let i = 0; i < ranges.length; i++) {
    const { from, to } = ranges[i];
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to))
      throw new PlanError("shape", `record ${i + 1} is not a pair of whole line numbers`);
    if (from > to) throw new PlanError("reversed", `record ${i + 1} is reversed (${from} > ${to})`);
    if (from < 1 || to > lineCount)
      throw new PlanError("bounds", `record ${i + 1} (${from},${to}) is outside lines 1..${lineCount}`);
    keys[i] = from * (lineCount + 1) + to;
  }
  // Most plans repeat no record: sorted keys tell so without a set, and the plan is kept as it is.
  const sorted = keys.slice().sort();
  let repeated = false;
  for (let i = 1; i < sorted.length && !repeated; i++) repeated = sorted[i] === sorted[i - 1];
  if (!repeated) return ranges.slice();
  const unique: PlanRange[] = [];
  const seen = new Set<number>();
  for (let i = 0; i < ranges.length; i++) {
    if (seen.has(keys[i])) continue;
    seen.add(keys[i]);
    unique.push({ from: ranges[i].from, to: ranges[i].to });
  }
  return unique;
}

/**
 * An array for `n` items, assigned by index: sized once when `n` is moderate (a pushed array is reallocated as it
 * grows), left to grow past that (the engine keeps a very large preallocated array in a slow dictionary form).
 */
export function slots<T>(n: number): T[] {
  return n <= 50_000 ? new Array<T>(n) : [];
}

/** A deletion mask, one entry per line: truthy for a removed line. */
export type LineMask = ArrayLike<boolean | number>;

/**
 * Render lines with a deletion mask: removed runs and carried markers fold into one marker each. `body` is the
 * summary's lines after the intro: the surviving line objects themselves, and a new line per marker.
 */
export function render(
  lines: readonly TranscriptLine[],
  removed: LineMask,
): { summary: string; kinds: LineKind[]; body: TranscriptLine[] } {
  // Counted first, so each list is allocated once at its size.
  let count = 0;
  let run = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].kind === "marker") run += markerCount(lines[i].text) ?? 0;
    else if (removed[i]) run += 1;
    else {
      if (run > 0) count++;
      run = 0;
      count++;
    }
  }
  if (run > 0) count++;
  const out = slots<string>(count + 1);
  const kinds = slots<LineKind>(count);
  const body = slots<TranscriptLine>(count);
  out[0] = INTRO;
  let at = 0;
  let removedRun = 0;
  const emit = (line: TranscriptLine) => {
    out[at + 1] = line.text;
    kinds[at] = line.kind;
    body[at] = line;
    at++;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.kind === "marker") removedRun += markerCount(line.text) ?? 0;
    else if (removed[i]) removedRun += 1;
    else {
      if (removedRun > 0) emit({ text: markerText(removedRun), kind: "marker" });
      removedRun = 0;
      emit(line);
    }
  }
  if (removedRun > 0) emit({ text: markerText(removedRun), kind: "marker" });
  return { summary: out.join("\n"), kinds, body };
}

/**
 * Length of `render(lines, removed).summary`, counted without building it: the same walk, adding each emitted
 * line's length and its newline instead of pushing the text.
 */
export function renderedLength(lines: readonly TranscriptLine[], removed: LineMask = []): number {
  let chars = INTRO.length;
  let pending = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (line.kind === "marker") pending += markerCount(line.text) ?? 0;
    else if (removed[i]) pending += 1;
    else {
      if (pending > 0) chars += markerLength(pending) + 1;
      pending = 0;
      chars += line.text.length + 1;
    }
  }
  if (pending > 0) chars += markerLength(pending) + 1;
  return chars;
}

/** `estimateTextTokens` of a text of this many characters (uncalibrated, as every figure of a plan is). */
const tokensOfChars = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

/**
 * The region's size as rendered without deletions, and the size a plan must bring it to: `retainRatio` of it, never
 * under the floor. The planner checks these before asking for a plan; `applyPlan` applies against the same figures.
 */
export function regionTarget(
  lines: readonly TranscriptLine[],
  options: Pick<RetentionOptions, "retainRatio" | "minRetainedTokens">,
): { regionTokens: number; targetTokens: number } {
  const regionTokens = tokensOfChars(renderedLength(lines));
  return {
    regionTokens,
    targetTokens: Math.max(Math.ceil(regionTokens * options.retainRatio), options.minRetainedTokens),
  };
}

const lineChars = (line: TranscriptLine) => line.text.length + 1;

/**
 * Apply ranked ranges until the kept region reaches the target (`retainRatio` of the region, never under the
 * floor). The piece that would cross the target is trimmed: its first lines go, as many as keep the region at or
 * above the target, and application stops there. Throws PlanError when the plan cannot save `minSavedTokens`: the
 * host then lets Pi compact natively instead of persisting a weak result.
 */
export function applyPlan(
  lines: readonly TranscriptLine[],
  ranges: readonly PlanRange[],
  options: RetentionOptions,
  { allowEmpty = false }: { allowEmpty?: boolean } = {},
): AppliedPlan {
  const valid = validateRanges(ranges, lines.length);
  // Sized without rendering: the only render of a plan is its result's.
  const { regionTokens, targetTokens } = regionTarget(lines, options);
  // The target is never below the floor, so stopping at the target also keeps the floor. Marker lines the render
  // adds only make the result longer.
  const targetChars = targetTokens * CHARS_PER_TOKEN;
  // Counted like the render: the intro line, then every line; markers are left out, so the count never exceeds the
  // real result and stopping at the target never lands below it.
  let keptChars = INTRO.length;
  for (const line of lines) keptChars += lineChars(line);

  const removed = new Uint8Array(lines.length);
  let applied = 0;
  let trimmed = false;
  let reached = false;
  for (const range of valid) {
    if (reached) break;
    let used = false;
    // The range's pieces in order: protected lines split it, and lines an earlier range removed are skipped (so
    // overlapping ranges merge). A piece only removes lines inside itself, so the next piece is found after it.
    for (let at = range.from - 1; at < range.to; ) {
      if (isProtected(lines[at]) || removed[at]) {
        at++;
        continue;
      }
      const start = at;
      let end = at + 1;
      while (end < range.to && !isProtected(lines[end]) && !removed[end]) end++;
      let i = start;
      while (i < end && keptChars - lineChars(lines[i]) >= targetChars) {
        removed[i] = 1;
        keptChars -= lineChars(lines[i]);
        i++;
      }
      if (i > start) used = true;
      if (i < end) {
        // The next line would cross the target: the region is as close to it as whole lines allow.
        trimmed = i > start;
        reached = true;
        break;
      }
      at = end;
    }
    if (used) applied++;
  }

  const { summary, kinds, body } = render(lines, removed);
  const keptTokens = estimateTextTokens(summary);
  const saved = regionTokens - keptTokens;
  // Counted, not filtered: a region has thousands of lines.
  let removedLines = 0;
  let pinnedLines = 0;
  for (let i = 0; i < lines.length; i++) {
    if (removed[i] && lines[i].kind !== "marker") removedLines++;
    if (lines[i].kind === "pinned") pinnedLines++;
  }
  // A plan that removes nothing would persist the region unchanged under a new entry: not a compaction.
  if (!removedLines && !allowEmpty)
    throw new PlanError("no-effect", "the plan removes no line within the retention limits");
  if (saved < options.minSavedTokens) {
    throw new PlanError(
      "too-little",
      `the plan saves about ${Math.max(saved, 0)} tokens of ${regionTokens}; at least ${options.minSavedTokens} are required`,
    );
  }
  return {
    summary,
    kinds,
    body,
    regionTokens,
    targetTokens,
    keptTokens,
    removedLines,
    pinnedLines,
    proposedRanges: valid.length,
    appliedRanges: applied,
    trimmed,
  };
}
