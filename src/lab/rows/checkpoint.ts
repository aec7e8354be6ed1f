// The `checkpoint` strategy as a lab row: Pi's own preparation picks the boundary, the strategy's pure
// planner writes the verbatim checkpoint (no model call), and the lab times the planner.
import { planCheckpoint } from "../../strategies/checkpoint/planner.ts";
import type { CompactionInput } from "../../strategies/contract.ts";
import type { LabSettings, Row } from "../row.ts";
import { compactionRow } from "./compaction-row.ts";

export const checkpointRow = (settings: LabSettings): Row =>
  compactionRow(
    { id: "checkpoint", label: "checkpoint", family: "ours", note: "checkpoint strategy: deterministic verbatim checkpoint, no model call" },
    settings,
    (prep, branch) => {
      const cwd = "/";
      const input: CompactionInput = {
        reason: "threshold",
        branch,
        firstKeptEntryId: prep.firstKeptEntryId,
        messagesToSummarize: prep.messagesToSummarize,
        turnPrefixMessages: prep.turnPrefixMessages,
        tokensBefore: prep.tokensBefore,
        contextWindow: settings.window,
        cwd,
        contextFiles: [],
      };
      const plan = planCheckpoint(input);
      return { summary: plan.summary, firstKeptEntryId: plan.firstKeptEntryId, details: plan.details, sideCalls: [], modelCall: false };
    },
  );
