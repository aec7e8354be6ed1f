// Pi's native compaction, simulated: Pi's own preparation chooses the cut and the file lists, and the request
// structure is modelled (an uncached summarization call over the serialized history, plus one for a split
// turn), but the summary text is a stand-in of realistic size, since the lab calls no model.
import { estimateTextTokens } from "../../projection/tokens.ts";
import type { PiPreparation } from "../pi-internals.ts";
import { piCompaction, piCore } from "../pi-internals.ts";
import type { LabSettings, Row, RowInfo } from "../row.ts";
import { compactionRow, type Summarized } from "./compaction-row.ts";

/** Tokens of a real Pi summary (the two in the shared sessions are about 900 and 1,070). */
export const STAND_IN_SUMMARY_TOKENS = 1_000;
/** Tokens of a turn-prefix summary when Pi splits a turn. */
export const STAND_IN_TURN_PREFIX_TOKENS = 300;
/** Pi's summarization instructions, appended to the serialized history (about 1,700 characters). */
const PROMPT_TOKENS = 430;

/** Filler of `tokens` tokens that carries no fact from the session (so probes measure only what Pi keeps verbatim). */
export function standInText(title: string, tokens: number): string {
  const line =
    "(simulated summary: this stand-in occupies the space a model-written summary would, and repeats nothing from the session)";
  let text = `## ${title}\n`;
  while (estimateTextTokens(text) < tokens) text += `${line}\n`;
  return text;
}

/** Summarize like Pi does, with stand-in text. Exported for tests. */
export async function nativeSummary(prep: PiPreparation): Promise<Summarized> {
  const pi = await piCompaction();
  const { convertToLlm, serializeConversation } = await piCore();
  const system = estimateTextTokens(pi.SUMMARIZATION_SYSTEM_PROMPT);
  const sideCalls = [];
  let summary = standInText("Goal", STAND_IN_SUMMARY_TOKENS);
  if (prep.messagesToSummarize.length > 0) {
    const history = serializeConversation(convertToLlm(prep.messagesToSummarize));
    sideCalls.push({
      input: system + estimateTextTokens(history) + estimateTextTokens(prep.previousSummary ?? "") + PROMPT_TOKENS,
      output: STAND_IN_SUMMARY_TOKENS,
    });
  }
  if (prep.isSplitTurn && prep.turnPrefixMessages.length > 0) {
    const prefix = serializeConversation(convertToLlm(prep.turnPrefixMessages));
    sideCalls.push({ input: system + estimateTextTokens(prefix) + PROMPT_TOKENS, output: STAND_IN_TURN_PREFIX_TOKENS });
    summary += `\n\n---\n\n**Turn Context (split turn):**\n\n${standInText("Original Request", STAND_IN_TURN_PREFIX_TOKENS)}`;
  }
  const { readFiles, modifiedFiles } = pi.computeFileLists(prep.fileOps);
  summary += pi.formatFileOperations(readFiles, modifiedFiles);
  return {
    summary,
    firstKeptEntryId: prep.firstKeptEntryId,
    details: { readFiles, modifiedFiles },
    sideCalls,
    modelCall: true,
  };
}

export const piNative = (settings: LabSettings, info: RowInfo): Row =>
  compactionRow(info, settings, nativeSummary, "pi");
