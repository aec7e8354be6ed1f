// The lab's answer to "which strategy should I set for sessions like these?". Each strategy a user can set
// gets a score from measured figures under stated weights: quality (the lower of two shares: what the agent
// needed later that the view still showed right after an act, and the text its later edits replace that the view
// showed at the edit) and cost (the cheapest candidate's cost over this one's, re-reads included). Rows that sent a
// request larger than the window cannot be chosen. Pure arithmetic; no I/O.
import { InputError } from "./errors.ts";
import type { Candidate, QualityMeasure, Recommendation, Weights } from "./recommendation.ts";
import type { RowTotals } from "./results.ts";
import { SETTABLE } from "./rows/registry.ts";

export const DEFAULT_WEIGHTS: Weights = { quality: 0.7, cost: 0.3 };

/** Scores this close (on a 0-100 scale) are a close call. */
export const CLOSE_POINTS = 3;
/** A cost weight this close to the one that would flip the choice also makes a close call. */
export const CLOSE_WEIGHT = 0.1;
/**
 * Below this share of the working set, a strategy loses the text the agent edits: it is never "a clear choice",
 * whatever its names kept.
 */
export const WORKING_SET_FLOOR = 0.9;

/**
 * Quality of a row: the lower of "needed later" (names the agent used again, shown right after acts) and the working
 * set (replaced texts shown at the edit), with the measure that set it. A row cannot make up for losing the content
 * by keeping its names, nor the reverse. A measure with nothing to count (no act, no counted edit) is 1.
 */
export function qualityOf(t: Pick<RowTotals, "neededLater" | "workingSet" | "retention">): {
  quality: number;
  neededLater: number;
  workingSet: number;
  decidedBy: QualityMeasure;
} {
  const neededLater = t.neededLater.share;
  const workingSet = t.workingSet.share;
  // Nothing needed later at a measured act and nothing edited: both shares are 1 by default, for every row, and say
  // nothing. What the final view kept of the probes is then the one measure of content left.
  if (t.neededLater.needed === 0 && t.workingSet.total === 0 && t.retention.total > 0)
    return { quality: t.retention.share, neededLater, workingSet, decidedBy: "probes" };
  return {
    quality: Math.min(neededLater, workingSet),
    neededLater,
    workingSet,
    decidedBy: workingSet < neededLater ? "working set" : "needed later",
  };
}

/** Parse `quality=2,cost=1` (any non-negative numbers; normalized to sum 1). */
export function parseWeights(spec: string | undefined): Weights {
  if (!spec) return { ...DEFAULT_WEIGHTS };
  const raw: Partial<Weights> = {};
  for (const part of spec.split(",")) {
    const [key, value] = part.split("=").map((s) => s?.trim());
    const n = Number(value);
    if ((key !== "quality" && key !== "cost") || value === undefined || value === "" || !Number.isFinite(n) || n < 0) {
      throw new InputError(`bad weight "${part}" (expected quality=…,cost=…, non-negative numbers)`);
    }
    raw[key] = n;
  }
  const quality = raw.quality ?? (raw.cost !== undefined ? Math.max(0, 1 - raw.cost) : DEFAULT_WEIGHTS.quality);
  const cost = raw.cost ?? (raw.quality !== undefined ? Math.max(0, 1 - raw.quality) : DEFAULT_WEIGHTS.cost);
  const sum = quality + cost;
  if (!(sum > 0)) throw new InputError(`bad weights "${spec}": at least one must be above 0`);
  return { quality: quality / sum, cost: cost / sum };
}

const pct = (share: number) => `${Math.round(share * 100)}%`;

/** One candidate's quality in words, naming the measure that decided it and giving the other. */
function qualityText(c: Candidate): string {
  if (c.decidedBy === "probes")
    return `quality ${pct(c.quality)}, set by the probes: its final view kept ${pct(c.quality)} of them (nothing measured was needed later or edited)`;
  const workingSet = `showed ${pct(c.workingSet)} of the text later edits replace (working set)`;
  // A row that never acted kept everything: "right after it acted" would describe acts that did not happen.
  const needed =
    c.acts === 0
      ? `${pct(c.neededLater)} of what the agent used later (it never had to act)`
      : `${pct(c.neededLater)} of what the agent used later right after it acted (needed later)`;
  return c.decidedBy === "working set"
    ? `quality ${pct(c.quality)}, set by the working set: it ${workingSet}, and ${needed}`
    : `quality ${pct(c.quality)}, set by needed later: it showed ${needed}, and ${pct(c.workingSet)} of the working set`;
}
const usd = (n: number) => `$${n.toFixed(2)}`;

/** A difference of quality or cost score too small to name (both are shares, from 0 to 1). */
const level = (d: number) => Math.abs(d) < 1e-9;

/** What a leader is ahead on, from its quality and cost score differences over the runner-up (not both below 0). */
function sideText(dq: number, dc: number): string {
  if (level(dq)) return "on cost, at the same quality";
  if (level(dc)) return dq > 0 ? "on quality, at the same cost" : "on cost, at the same quality";
  if (dq > 0) return dc > 0 ? "on both quality and cost" : "on quality, not on cost";
  return "on cost, not on quality";
}

/** Two rows with the same score: level on both counts, or the first ahead on one (or by a hair on both). */
function tieText(first: string, second: string, dq: number, dc: number): string {
  if (level(dq) && level(dc)) return `${first} and ${second} have the same quality and cost`;
  return `${first} and ${second} score the same; ${first} is ahead ${sideText(dq, dc)}`;
}

/** Score the settable strategies of a run and explain the choice. */
export function recommend(totals: readonly RowTotals[], weights: Weights = DEFAULT_WEIGHTS): Recommendation {
  const settable = totals.filter((t) => SETTABLE[t.info.id]);
  // Requests over the window in every settable strategy (a single message larger than the window) are no strategy's
  // fault: a strategy is out only when it sent more of them than the best did.
  const unavoidable = settable.length ? Math.min(...settable.map((t) => t.overWindow)) : 0;
  const over = (t: RowTotals) => t.overWindow > unavoidable;
  const eligible = settable.filter((t) => !over(t));
  const cheapest = Math.min(...eligible.map((t) => t.cost.usd).filter((c) => c > 0), Number.POSITIVE_INFINITY);
  const candidates: Candidate[] = settable.map((t) => {
    const { quality, neededLater, workingSet, decidedBy } = qualityOf(t);
    const costScore = t.cost.usd > 0 && Number.isFinite(cheapest) ? Math.min(1, cheapest / t.cost.usd) : 1;
    return {
      id: t.info.id,
      label: t.info.label,
      quality,
      neededLater,
      workingSet,
      decidedBy,
      acts: t.neededLater.acts,
      usd: t.cost.usd,
      costScore,
      score: 100 * (weights.quality * quality + weights.cost * costScore),
      ...(over(t) ? { excluded: `${t.overWindow} request(s) larger than the window` } : {}),
    };
  });
  candidates.sort(
    (a, b) => Number(!!a.excluded) - Number(!!b.excluded) || b.score - a.score || a.id.localeCompare(b.id),
  );
  const weightText = `weights: quality ${pct(weights.quality)}, cost ${pct(weights.cost)}`;
  const ranked = candidates.filter((c) => !c.excluded);
  const [best, second] = ranked;
  if (!best) {
    // Only when nothing settable ran (--strategies none): the strategy with the fewest requests over the window is
    // always eligible.
    const why = `the run included none of the strategies this package can set (${Object.keys(SETTABLE).join(", ")})`;
    return { weights, candidates, closeCall: false, lines: [`No strategy to recommend: ${why} (${weightText}).`] };
  }
  const info = SETTABLE[best.id];
  const lines: string[] = [];
  const choice = {
    id: best.id,
    label: best.label,
    setting: info.sentence,
    value: info.value,
    ...(info.caveat ? { caveat: info.caveat } : {}),
  };
  if (candidates.every((c) => c.acts === 0)) {
    lines.push(
      `Use ${best.label}: ${info.sentence}. But it hardly matters here: no strategy had to act, so all keep everything and cost about the same.`,
    );
    return { weights, candidates, choice, closeCall: true, lines };
  }
  lines.push(`Use ${best.label}: ${info.sentence}. Score ${best.score.toFixed(1)} of 100 (${weightText}).`);
  // A row that never acted kept everything the agent used later: say so rather than describe acts that did not happen.
  const bestText =
    best.acts === 0
      ? `it never had to act, so the view kept everything the agent used later, and ${pct(best.workingSet)} of the text later edits replace (working set)`
      : qualityText(best);
  lines.push(
    `Why: ${bestText}, at ${usd(best.usd)}` +
      (second
        ? `; ${second.label}: ${qualityText(second)}, at ${usd(second.usd)} (score ${second.score.toFixed(1)}).`
        : "."),
  );
  let closeCall = false;
  // Names alone do not make a clear choice: a leader that shows less of the text the agent edits than the runner-up,
  // or loses much of it, is not one.
  const losesContent =
    best.workingSet < WORKING_SET_FLOOR || (second !== undefined && best.workingSet < second.workingSet);
  let flipAtCostWeight: number | undefined;
  if (second) {
    // Where (1 - w) * dq + w * dc = 0: the cost weight at which the two swap places.
    const dq = best.quality - second.quality;
    const dc = best.costScore - second.costScore;
    if (dq !== dc) {
      const w = dq / (dq - dc);
      if (w > 0 && w < 1) flipAtCostWeight = w;
    }
    const gap = best.score - second.score;
    // Close: the scores are near, or the weights are near the point where the order flips. A leader that is at
    // least as good on both counts is a clear choice however near the scores are.
    // A tie is never a clear choice, whatever the weights.
    const tie = gap < 0.05;
    closeCall =
      tie ||
      (flipAtCostWeight !== undefined &&
        (gap < CLOSE_POINTS || Math.abs(flipAtCostWeight - weights.cost) < CLOSE_WEIGHT));
    const lead = tie
      ? tieText(best.label, second.label, dq, dc)
      : `${best.label} leads by ${gap.toFixed(1)} points, ${sideText(dq, dc)}`;
    const flip =
      flipAtCostWeight === undefined
        ? level(dq) && level(dc)
          ? "no choice of weights separates them"
          : `no choice of weights makes ${second.label} win`
        : `${second.label} would win with the cost weight ${weights.cost < flipAtCostWeight ? "above" : "below"} ${pct(flipAtCostWeight)}`;
    const verdict = tie ? "A tie" : closeCall ? "A close call" : losesContent ? "Not a clear choice" : "A clear choice";
    lines.push(`${verdict}: ${lead}; ${flip}.`);
  }
  if (losesContent && !closeCall) {
    lines.push(
      second && best.workingSet < second.workingSet
        ? `${best.label} shows less of the text later edits replace than ${second.label} (${pct(best.workingSet)} against ${pct(second.workingSet)}): it leads on what it kept of the rest.`
        : `${best.label} showed only ${pct(best.workingSet)} of the text later edits replace: the agent would re-read files to edit them (the re-reads are in its cost).`,
    );
  }
  if (info.caveat) lines.push(`Note: ${best.label}: ${info.caveat}.`);
  if (unavoidable > 0)
    lines.push(
      `Note: ${unavoidable} request(s) were larger than the window in every strategy (a message larger than the window on its own); a provider would reject them whatever the setting.`,
    );
  // Honesty about the rows a user cannot set here (baselines, the fold policy): say so when one scores higher.
  const references = totals
    .filter((t) => !SETTABLE[t.info.id] && !over(t) && t.cost.usd > 0)
    .map((t) => ({
      label: t.info.label,
      score: 100 * (weights.quality * qualityOf(t).quality + weights.cost * Math.min(1, cheapest / t.cost.usd)),
    }))
    .filter((r) => r.score > best.score)
    .sort((a, b) => b.score - a.score);
  if (references.length) {
    lines.push(
      `For reference, rows that are not settings of this package scored higher: ${references.map((r) => `${r.label} ${r.score.toFixed(1)}`).join(", ")}.`,
    );
  }
  const excluded = candidates.filter((c) => c.excluded);
  if (excluded.length) lines.push(`Not eligible: ${excluded.map((c) => `${c.label} (${c.excluded})`).join("; ")}.`);
  return {
    weights,
    candidates,
    choice,
    ...(second ? { runnerUp: { id: second.id, label: second.label } } : {}),
    closeCall,
    ...(losesContent ? { losesWorkingSet: true } : {}),
    ...(flipAtCostWeight !== undefined ? { flipAtCostWeight } : {}),
    lines,
  };
}

/**
 * How sure one session's own choice is, as a note after its name: when no strategy had to act the choice did not
 * matter (which the recommendation marks as a close call, though nothing was close), else a close call or nothing.
 */
export function choiceNote(recommendation: Recommendation | undefined): string {
  if (!recommendation?.choice) return "";
  if (recommendation.candidates.every((c) => c.acts === 0)) return " (nothing had to act)";
  return recommendation.closeCall ? " (a close call)" : "";
}
