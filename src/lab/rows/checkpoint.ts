// The `checkpoint` strategy as a lab row: Pi's own preparation picks the boundary, the strategy's pure
// planner writes the verbatim checkpoint (no model call), and the lab times the planner.
import { planCheckpoint } from "../../strategies/checkpoint/planner.ts";
import { compactionInput } from "../../strategies/contract.ts";
import type { Row, SessionSettings } from "../row.ts";
import { compactionRow } from "./compaction-row.ts";

export const checkpointRow = (settings: SessionSettings): Row =>
  compactionRow(
    { id: "checkpoint", label: "checkpoint", family: "ours", note: "checkpoint strategy: deterministic verbatim checkpoint, no model call" },
    settings,
    (prep, branch) => {
      const plan = planCheckpoint(compactionInput(prep, { branch, contextWindow: settings.window, cwd: settings.cwd }));
      return { summary: plan.summary, firstKeptEntryId: plan.firstKeptEntryId, details: plan.details, sideCalls: [], modelCall: false };
    },
  );
