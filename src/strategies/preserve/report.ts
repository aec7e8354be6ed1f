// What the user reads about a preserve tool summary: its card shows the full token accounting in the original
// extension's breakdown, then the summary. Pure: no I/O; reads only the numbers persisted in `details`.
import type { PreserveDetails } from "./checkpoint.ts";

const tok = (n: number): string => `~${Math.round(n).toLocaleString("en-US")} tok`;

const WRITERS: Record<PreserveDetails["writer"], string> = {
  model: "written by the model, cache-friendly",
  "delta-only": "written by the model from the delta only",
  extractive: "written without a model",
};

/** The accounting block shown when the card is expanded. Older summaries without the full breakdown get a short form. */
export function summaryReport(details: PreserveDetails): string {
  const t = details.tokens;
  const lines = [`[preserve] Tool summary #${details.checkpoint} (${WRITERS[details.writer]})`];
  if (details.note) lines.push(`warning: ${details.note}`);
  if (!t.compacted || !t.dialogue) {
    lines.push(`compacted: ${tok(t.hidden)}`, `tool summary: ${tok(t.checkpoint)}`);
    return lines.join("\n");
  }
  const before = t.contextBefore === null ? "unknown" : tok(t.contextBefore);
  lines.push(
    "",
    `context: ${before} → ${tok(t.contextAfter)}${t.headroom === null ? "" : `, headroom ${tok(t.headroom)}`}`,
    `compacted: ${tok(t.hidden)}${t.checkpoint > 0 ? ` (${(t.hidden / t.checkpoint).toFixed(1)}x)` : ""}`,
    `  tool calls: ${tok(t.compacted.toolCalls)}`,
    `  tool results: ${tok(t.compacted.toolResults)}`,
    `  reasoning: ${tok(t.compacted.reasoning)}`,
    `  other: ${tok(t.compacted.other)}`,
    `raw tail kept: ${tok(t.rawTail)}${t.carried ? ` (${tok(t.carried)} did not fit this tool summary)` : ""}`,
    `raw technical state before: ${tok(t.raw)}`,
    "",
    "preserved dialogue:",
    `  user messages: ${tok(t.dialogue.user)}`,
    `  assistant answers: ${tok(t.dialogue.assistant)}`,
    `tool summaries: ${t.checkpoints.count + 1} total, ${tok(t.checkpoints.tokens + t.checkpoint)}`,
    `  earlier: ${t.checkpoints.count}, ${tok(t.checkpoints.tokens)}`,
    `  #${details.checkpoint} (new): ${tok(t.checkpoint)}`,
  );
  if (t.base !== null) lines.push(`base context (system prompt, tools, overhead): ${tok(t.base)}`);
  lines.push(`covered user messages: ${details.userOrdinals.join(", ") || "(none)"}`);
  return lines.join("\n");
}
