// The model planner's side of the `planned` strategy: the request that asks a model which line ranges are safest
// to delete (a constrained `submit_deletion_plan` tool, or the text form), and the parsers of its reply.
// Pure: no I/O; the model call itself is injected.
import type { Tool } from "@earendil-works/pi-ai";
import type { ModelReply, ModelRequest } from "../contract.ts";
import { type PlanDiagnostics, PlanError } from "../shared/fallback.ts";
import type { PlanRange } from "./apply.ts";
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
  "Answer by calling submit_deletion_plan once with the deletion ranges (inclusive line numbers), most deletable first.",
  "If you cannot call tools, reply with the ranges only, one per line, as `first,last`. No prose, no explanations.",
].join("\n");

/** The tool the model planner answers with. Its arguments are the plan: 1-based inclusive ranges in rank order. */
export const DELETION_PLAN_TOOL: Tool = {
  name: "submit_deletion_plan",
  description:
    "Submit the deletion plan: ranges of the numbered transcript's lines (1-based, inclusive), safest to delete first. The host applies them in this order and stops at the target size.",
  parameters: {
    type: "object",
    properties: {
      ranges: {
        type: "array",
        description: "Deletion ranges in rank order, safest first.",
        items: {
          type: "object",
          properties: {
            start: { type: "integer", description: "First line to delete (1-based)." },
            end: { type: "integer", description: "Last line to delete (inclusive)." },
          },
          required: ["start", "end"],
          additionalProperties: false,
        },
      },
    },
    required: ["ranges"],
    additionalProperties: false,
  },
  // Providers that support it sample the arguments against the schema; the others still get the tool.
  constrainedSampling: { type: "json_schema", strict: "prefer" },
};

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

/**
 * `"\n{n}| "`, the line break and number before line n of the prompt, made once per number: every prompt numbers its
 * lines from 1, so the same numbers recur at every plan. Bounded: numbers past `NUMBER_SLOTS` are made each time.
 */
const NUMBERS: string[] = [""];
const NUMBER_SLOTS = 16_384;

function lineNumber(n: number): string {
  if (n >= NUMBER_SLOTS) return `\n${n}| `;
  while (NUMBERS.length <= n) NUMBERS.push(`\n${NUMBERS.length}| `);
  return NUMBERS[n];
}

/** The planner request: objective, target size, protected lines, instructions, then the numbered transcript. */
export function buildPlannerPrompt(
  lines: readonly TranscriptLine[],
  brief: PlannerBrief,
): ModelRequest & { tools: readonly Tool[] } {
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
  if (brief.customInstructions?.trim())
    parts.push("", "<instructions>", brief.customInstructions.trim(), "</instructions>");
  parts.push(
    "",
    `Answer with one ${DELETION_PLAN_TOOL.name} call, e.g. {"ranges":[{"start":120,"end":180},{"start":6,"end":40}]}.`,
    "Without tools, answer with one range per line and nothing else:",
    "120,180",
    "6,40",
    "",
    "<transcript>",
  );
  // The head, then each line as its number and its text, appended: the engine keeps the result as a rope of the
  // pieces until someone reads its characters (the provider serializing the request does; sizing it needs only the
  // length), so no string and no list slot is made per line.
  let prompt = parts.join("\n");
  for (let i = 0; i < lines.length; i++) {
    prompt += lineNumber(i + 1);
    prompt += lines[i].text;
  }
  prompt += "\n</transcript>";
  return { system: PLANNER_SYSTEM, prompt, tools: [DELETION_PLAN_TOOL] };
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
 *
 * `cut` says the reply stopped at the output limit without finishing its last line. That line is then dropped
 * whatever it looks like: `705,7` is a well-formed record, yet it may be the start of `705,712`.
 */
export function parsePlanText(reply: string, cut = false): PlanRange[] {
  if (typeof reply !== "string") throw new PlanError("empty", "the planner returned no text");
  if (reply.length > MAX_REPLY_CHARS)
    throw new PlanError("too-large", `the planner reply has ${reply.length} characters (limit ${MAX_REPLY_CHARS})`);
  const all = reply.split(/\r?\n/);
  // The cut line is the reply's last one (possibly blank after a cut right at a newline: then nothing is lost).
  if (cut) all.pop();
  const trimmed = unwrap(all.map((l) => l.trim()).filter((l) => l !== ""));
  const ranges: PlanRange[] = [];
  for (let i = 0; i < trimmed.length; i++) {
    const match = RECORD.exec(trimmed[i]);
    if (match) {
      ranges.push({ from: Number(match[1]), to: Number(match[2]) });
      if (ranges.length > MAX_RECORDS)
        throw new PlanError("too-large", `the planner returned more than ${MAX_RECORDS} records`);
      continue;
    }
    if (i === trimmed.length - 1 && i > 0 && CUT_RECORD.test(trimmed[i])) break;
    throw new PlanError(
      "unparseable",
      `planner reply line ${i + 1} of ${trimmed.length} is not a \`first,last\` record`,
    );
  }
  if (!ranges.length) throw new PlanError("empty", "the planner proposed no deletions");
  return ranges;
}

/** Why one tool-plan record cannot be used, or undefined when it can. */
function recordProblem(record: unknown, lineCount: number): "shape" | "reversed" | "bounds" | undefined {
  if (!record || typeof record !== "object") return "shape";
  const { start, end } = record as { start?: unknown; end?: unknown };
  if (
    typeof start !== "number" ||
    typeof end !== "number" ||
    !Number.isSafeInteger(start) ||
    !Number.isSafeInteger(end)
  )
    return "shape";
  if (start > end) return "reversed";
  if (start < 1 || end > lineCount) return "bounds";
  return undefined;
}

/**
 * Read the arguments of a `submit_deletion_plan` call. The envelope must be `{ ranges: [...] }`; a record that is
 * malformed, reversed or out of bounds is discarded on its own, and the rest keep their rank order. Diagnostics count
 * what was discarded and where the first one was; they never quote the arguments.
 */
export function parseToolPlan(args: unknown, lineCount: number): { ranges: PlanRange[]; diagnostics: PlanDiagnostics } {
  const records =
    args && typeof args === "object" && !Array.isArray(args) ? (args as { ranges?: unknown }).ranges : undefined;
  if (!Array.isArray(records))
    throw new PlanError("envelope", `the ${DELETION_PLAN_TOOL.name} arguments are not { ranges: [...] }`, {
      form: "tool",
    });
  if (records.length > MAX_RECORDS) {
    throw new PlanError("too-large", `the planner sent ${records.length} records (limit ${MAX_RECORDS})`, {
      form: "tool",
      records: records.length,
    });
  }
  const ranges: PlanRange[] = [];
  const discardedBy: Record<string, number> = {};
  let firstDiscarded: number | undefined;
  records.forEach((record: unknown, i) => {
    const problem = recordProblem(record, lineCount);
    if (problem) {
      discardedBy[problem] = (discardedBy[problem] ?? 0) + 1;
      firstDiscarded ??= i + 1;
      return;
    }
    const { start, end } = record as { start: number; end: number };
    ranges.push({ from: start, to: end });
  });
  const diagnostics: PlanDiagnostics = {
    form: "tool",
    records: records.length,
    accepted: ranges.length,
    discarded: records.length - ranges.length,
    ...(firstDiscarded !== undefined ? { discardedBy, firstDiscarded } : {}),
  };
  if (!records.length) throw new PlanError("empty", "the planner proposed no deletions", diagnostics);
  if (!ranges.length)
    throw new PlanError(
      "no-valid-records",
      `none of the ${records.length} records is a usable range of lines 1..${lineCount}`,
      diagnostics,
    );
  return { ranges, diagnostics };
}

/**
 * Read a planner reply: one `submit_deletion_plan` call (records checked one by one), or, without a tool call, the
 * text form (all or nothing). Any other tool call, or more than one plan, is not a plan.
 */
export function readPlanReply(
  reply: string | ModelReply,
  lineCount: number,
): { ranges: PlanRange[]; diagnostics: PlanDiagnostics } {
  const { text, toolCalls, stopReason } =
    typeof reply === "string" ? { text: reply, toolCalls: [], stopReason: undefined } : reply;
  const stop: PlanDiagnostics = stopReason ? { stopReason } : {};
  try {
    return readPlan(text, toolCalls, lineCount, stopReason === "length", stop);
  } catch (error) {
    if (error instanceof PlanError) error.diagnostics = { ...stop, ...error.diagnostics };
    throw error;
  }
}

function readPlan(
  text: string,
  toolCalls: ModelReply["toolCalls"],
  lineCount: number,
  cut: boolean,
  stop: PlanDiagnostics,
): { ranges: PlanRange[]; diagnostics: PlanDiagnostics } {
  const plans = toolCalls.filter((call) => call.name === DELETION_PLAN_TOOL.name);
  if (plans.length > 1)
    throw new PlanError("envelope", `the planner called ${DELETION_PLAN_TOOL.name} ${plans.length} times`, {
      form: "tool",
    });
  if (plans.length === 1) {
    const read = parseToolPlan(plans[0].arguments, lineCount);
    return { ranges: read.ranges, diagnostics: { ...read.diagnostics, ...stop } };
  }
  if (toolCalls.length)
    throw new PlanError(
      "envelope",
      `the planner called ${toolCalls.length} other tool(s) instead of ${DELETION_PLAN_TOOL.name}`,
      { form: "tool" },
    );
  // A reply cut at the output limit loses its last line, unless the cut fell right after a newline.
  const cutLine = cut && typeof text === "string" && !/\n\s*$/.test(text) && text.trim() !== "";
  try {
    const ranges = parsePlanText(text, cutLine);
    const records = ranges.length + (cutLine ? 1 : 0);
    return {
      ranges,
      diagnostics: {
        form: "text",
        records,
        accepted: ranges.length,
        discarded: records - ranges.length,
        ...stop,
        ...(cutLine ? { truncated: true } : {}),
      },
    };
  } catch (error) {
    if (error instanceof PlanError) error.diagnostics = { form: "text", ...error.diagnostics };
    throw error;
  }
}
