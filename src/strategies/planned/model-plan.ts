// The model planner's side of the `planned` strategy: the prompt that asks a model which line ranges are safest
// to delete, and the strict parser of its text reply. Pure: no I/O; the model call itself is injected.
import { PlanError, type PlanRange } from "./apply.ts";
import { isProtected, type TranscriptLine } from "./transcript.ts";

/** What the prompt says besides the transcript. */
export interface PlannerBrief {
  /** The user's latest request, as the objective to protect. */
  objective?: string;
  regionTokens: number;
  targetTokens: number;
  customInstructions?: string;
}

export const PLANNER_SYSTEM = [
  "You select lines to delete from an old coding-session transcript so that it fits a smaller context.",
  "You never rewrite anything: the host deletes the ranges you name and keeps every other line exactly.",
  "Reply with deletion ranges only, one per line, as `first,last` (inclusive line numbers), most deletable first.",
  "No prose, no explanations.",
].join("\n");

/** Longest objective quoted in the prompt. */
const OBJECTIVE_CHARS = 2_000;

/** Protected line numbers compressed into `a-b` runs. */
export function protectedRuns(lines: readonly TranscriptLine[]): string {
  const runs: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!isProtected(lines[i])) continue;
    let j = i;
    while (j + 1 < lines.length && isProtected(lines[j + 1])) j++;
    runs.push(i === j ? `${i + 1}` : `${i + 1}-${j + 1}`);
    i = j;
  }
  return runs.join(", ") || "none";
}

/** The planner request: objective, target size, protected lines, instructions, then the numbered transcript. */
export function buildPlannerPrompt(lines: readonly TranscriptLine[], brief: PlannerBrief): { system: string; prompt: string } {
  const objective = brief.objective ? brief.objective.slice(0, OBJECTIVE_CHARS) : "(not stated)";
  const parts = [
    "<objective>",
    objective,
    "</objective>",
    "",
    `The transcript below is about ${brief.regionTokens} tokens. Rank deletions so that about ${brief.targetTokens} tokens remain;`,
    "the host applies your ranges in order and stops once the target is reached, so put the safest deletions first and",
    "list enough of them.",
    "Safest to delete: repeated or superseded tool output, long listings, bulky file contents that were later re-read or",
    "changed, exploratory narration and abandoned hypotheses, long reasoning. Keep the goal, the user's constraints,",
    "decisions and their reasons, exact errors, paths, commands and results that later work depends on.",
    `Protected lines are never deleted even if your ranges cover them: ${protectedRuns(lines)}.`,
  ];
  if (brief.customInstructions?.trim()) parts.push("", "<instructions>", brief.customInstructions.trim(), "</instructions>");
  parts.push(
    "",
    "Answer format, one range per line, nothing else:",
    "120,180",
    "6,40",
    "",
    "<transcript>",
    ...lines.map((line, i) => `${i + 1}| ${line.text}`),
    "</transcript>",
  );
  return { system: PLANNER_SYSTEM, prompt: parts.join("\n") };
}

/** Largest reply the parser reads, and most records it accepts. Beyond that the reply is not a plan. */
export const MAX_REPLY_CHARS = 200_000;
export const MAX_RECORDS = 5_000;

const RECORD = /^(\d{1,9})\s*,\s*(\d{1,9})$/;
/** A record the model was cut off while writing (`12,` or `12`), tolerated only as the very last line. */
const CUT_RECORD = /^\d{1,9}\s*,?\s*$/;

/** Strip one wrapper around the records: a code fence, or a `<plan>` / `<deletions>` tag pair. */
function unwrap(lines: string[]): string[] {
  let body = lines;
  if (body.length && /^```[\w-]*$/.test(body[0])) {
    body = body.slice(1);
    if (body.length && body[body.length - 1] === "```") body = body.slice(0, -1);
  } else if (body.length && /^<(plan|deletions)>$/.test(body[0])) {
    const close = `</${body[0].slice(1)}`;
    body = body.slice(1);
    if (body.length && body[body.length - 1] === close) body = body.slice(0, -1);
  }
  return body;
}

/**
 * Parse a text plan: one `a,b` record per line, most deletable first. One wrapper and a final record cut off
 * mid-line are tolerated; anything else rejects the whole reply (all or nothing). Errors name the category and the
 * record number, never the reply's text.
 */
export function parsePlanText(reply: string): PlanRange[] {
  if (typeof reply !== "string") throw new PlanError("empty", "the planner returned no text");
  if (reply.length > MAX_REPLY_CHARS) throw new PlanError("too-large", `the planner reply has ${reply.length} characters (limit ${MAX_REPLY_CHARS})`);
  const trimmed = unwrap(
    reply
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== ""),
  );
  const ranges: PlanRange[] = [];
  for (let i = 0; i < trimmed.length; i++) {
    const match = RECORD.exec(trimmed[i]);
    if (match) {
      ranges.push({ from: Number(match[1]), to: Number(match[2]) });
      if (ranges.length > MAX_RECORDS) throw new PlanError("too-large", `the planner returned more than ${MAX_RECORDS} records`);
      continue;
    }
    if (i === trimmed.length - 1 && i > 0 && CUT_RECORD.test(trimmed[i])) break;
    throw new PlanError("unparseable", `planner reply line ${i + 1} of ${trimmed.length} is not a \`first,last\` record`);
  }
  if (!ranges.length) throw new PlanError("empty", "the planner proposed no deletions");
  return ranges;
}
