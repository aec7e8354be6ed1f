// Builds the one summary message a fold appends: the model's handoff summary plus the outputs of the other
// tool calls of the same step, and the constant-size range rule. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { LedgerType, textOf, type FoldDetails, type FoldRange } from "../../log/entries.ts";

/** A tool call of the requesting step and its persisted result. */
export interface StepOutput {
  toolName: string;
  args: unknown;
  result: AgentMessage | undefined;
}

/** Tools whose output describes the pre-fold state and so is not carried into the summary. */
export function isContextTool(name: string): boolean {
  return name.startsWith("context_");
}

const ARG_PREVIEW = 200;

function labelFor(output: StepOutput): string {
  // Codemode contributes its output only: the script source is bulky and says nothing the output does not.
  if (output.toolName === "codemode" || output.toolName === "code") return output.toolName;
  let args = JSON.stringify(output.args ?? {});
  if (args.length > ARG_PREVIEW) args = `${args.slice(0, ARG_PREVIEW)}…`;
  return `${output.toolName} ${args}`;
}

/** The model-visible text of the fold summary message. */
export function renderFoldText(summary: string, outputs: readonly StepOutput[]): string {
  const kept = outputs.filter((o) => !isContextTool(o.toolName));
  const parts = [`[Context compacted: earlier work was folded into this summary]`, "", summary.trim()];
  if (kept.length) {
    parts.push("", "Outputs of the other tool calls made in the same step:");
    for (const output of kept) {
      const result = output.result as { content?: unknown; isError?: boolean } | undefined;
      const body = result ? textOf(result.content) : "(no result was recorded)";
      parts.push("", `--- ${labelFor(output)}${result?.isError ? " (error)" : ""}`, body);
    }
  }
  return parts.join("\n");
}

/** The custom_message draft a committed fold returns at turn_end. */
export function foldDraft(input: {
  summary: string;
  outputs: readonly StepOutput[];
  range: FoldRange;
  requestEntryId: string;
  target: string;
  backupCheckpoint?: string;
}): { type: "custom_message"; customType: string; content: string; display: boolean; details: FoldDetails } {
  return {
    type: "custom_message",
    customType: LedgerType.fold,
    content: renderFoldText(input.summary, input.outputs),
    display: true,
    details: {
      v: 1,
      range: input.range,
      requestEntryId: input.requestEntryId,
      target: input.target,
      ...(input.backupCheckpoint ? { backupCheckpoint: input.backupCheckpoint } : {}),
    },
  };
}

/** The short, model-visible notice for a cancelled or dropped fold. */
export function noticeDraft(reason: string): { type: "custom_message"; customType: string; content: string; display: boolean; details: { v: 1; kind: "foldCancelled"; reason: string } } {
  return {
    type: "custom_message",
    customType: LedgerType.notice,
    content: `context_compact was cancelled and nothing was folded: ${reason}. The full history is still in context.`,
    display: false,
    details: { v: 1, kind: "foldCancelled", reason },
  };
}
