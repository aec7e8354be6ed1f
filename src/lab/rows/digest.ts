// The `digest` strategy as a lab row. Before each request the previous step has ended (a turn_end in Pi): the row
// asks the strategy's own digestDue and planDigest, exactly as the host's turn_end hook does, and when a digest is due appends it and projects the
// view again. No model call.
import { performance } from "node:perf_hooks";
import type { SessionEntry } from "../../log/entries.ts";
import { evolve, initialLedgerState, type LedgerState } from "../../projection/ledger-state.ts";
import { projectBranch } from "../../projection/project.ts";
import { digestDue, planDigest } from "../../strategies/digest/plan.ts";
import { digestPolicy, type DigestPolicy } from "../../strategies/digest/policy.ts";
import type { LabSettings, Row } from "../row.ts";
import type { TimedAction } from "./compaction-row.ts";
import { SimulatedLedger } from "./ledger-row.ts";

/** `settings.cwd`: the session's working directory from its header, when the lab knows it. */
export const digestRow = (settings: LabSettings & { cwd?: string }, policy: DigestPolicy = digestPolicy(settings.window)): Row => {
  const cwd = settings.cwd ?? "";
  const ledger = new SimulatedLedger("lab-digest-");
  let state: LedgerState = initialLedgerState();
  let lastAssistant: string | undefined;
  return {
    info: {
      id: "digest",
      label: "digest",
      family: "ours",
      note: "digest strategy: dialogue verbatim; older tool steps become append-only digests (call line, error and result lines) in batches; no model call",
    },
    view: ledger.view,
    ledger: () => ledger.branch,
    append(entry: SessionEntry) {
      ledger.appendSource(entry);
      state = evolve(state, entry);
      if (entry.type === "message" && entry.message.role === "assistant") lastAssistant = entry.id;
    },
    beforeRequest(): TimedAction | undefined {
      if (!lastAssistant) return undefined;
      const usageTokens = ledger.view.tokens;
      const started = performance.now();
      const due = digestDue({ branch: ledger.branch, stepEntryId: lastAssistant, drafts: [], usageTokens, policy });
      if (!due.due) return undefined;
      const outcome = planDigest({ branch: ledger.branch, limitId: due.limitId, contextWindow: settings.window, usageTokens, cwd, policy });
      if (!outcome.ok) return undefined;
      const { customType, content, display, details } = outcome.draft;
      const fact = ledger.appendFact({ type: "custom_message", customType, content, display, details });
      state = evolve(state, fact);
      ledger.reset(projectBranch(ledger.branch, state).messages);
      return { kind: "digest", tokensBefore: usageTokens, sideCalls: [], latencyMs: performance.now() - started };
    },
  };
};
