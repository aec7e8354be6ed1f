// The `fold` strategy driven by a scripted policy instead of the model: at each new user message, the
// finished work of the previous request (everything after its user message) is folded into a short summary
// with a constant-size range rule. The projection (src/projection) does the hiding, exactly as in Pi.
import { performance } from "node:perf_hooks";
import { type SessionEntry, textOf } from "../../log/entries.ts";
import { type FoldDetails, LedgerType } from "../../strategies/catalog.ts";
import { isFoldable } from "../../projection/ranges.ts";
import type { LabSettings, Row, RowInfo } from "../row.ts";
import type { TimedAction } from "./compaction-row.ts";
import { SimulatedLedger } from "./ledger-row.ts";

const MAX_OUTCOME_CHARS = 600;

/** The policy's summary of a finished request: files it touched and the assistant's last words on it. */
export function foldSummary(entries: readonly SessionEntry[]): string {
  const files = new Set<string>();
  let outcome = "";
  let steps = 0;
  for (const entry of entries) {
    if (entry.type !== "message" || entry.message.role !== "assistant") continue;
    steps++;
    for (const block of entry.message.content ?? []) {
      if (block.type === "toolCall" && /^(read|edit|write)$/.test(block.name)) {
        const path = (block.arguments as { path?: unknown }).path;
        if (typeof path === "string") files.add(path);
      }
    }
    const text = textOf(entry.message.content);
    if (text.trim()) outcome = text.trim();
  }
  const lines = [`[folded: ${steps} assistant steps of finished work]`];
  if (files.size) lines.push(`Files touched: ${[...files].join(", ")}`);
  if (outcome)
    lines.push(`Outcome: ${outcome.length > MAX_OUTCOME_CHARS ? `${outcome.slice(0, MAX_OUTCOME_CHARS)}…` : outcome}`);
  return lines.join("\n");
}

export const foldPolicy = (_settings: LabSettings, info: RowInfo): Row => {
  const ledger = new SimulatedLedger("lab-fold-");
  let turnUserId: string | undefined;
  let turnStart = -1;
  let pending: TimedAction | undefined;
  return {
    info,
    view: ledger.view,
    ledger: () => ledger.branch,
    append(entry: SessionEntry) {
      const isUser = entry.type === "message" && entry.message.role === "user";
      if (isUser && turnUserId !== undefined) {
        const finished = ledger.branch.slice(turnStart + 1);
        const through = finished[finished.length - 1];
        if (through && finished.some(isFoldable)) {
          const tokensBefore = ledger.view.tokens;
          const started = performance.now();
          const requestEntry =
            [...finished].reverse().find((e) => e.type === "message" && e.message.role === "assistant") ?? through;
          const details: FoldDetails = {
            v: 1,
            range: { afterId: turnUserId, throughId: through.id },
            requestEntryId: requestEntry.id,
            target: turnUserId,
          };
          ledger.appendFact({
            type: "custom_message",
            customType: LedgerType.fold,
            content: foldSummary(finished),
            display: true,
            details,
          });
          ledger.reproject();
          pending = { kind: "fold", tokensBefore, sideCalls: [], latencyMs: performance.now() - started };
        }
      }
      ledger.appendSource(entry);
      if (isUser) {
        turnUserId = ledger.branch[ledger.branch.length - 1].id;
        turnStart = ledger.branch.length - 1;
      }
    },
    beforeRequest() {
      const action = pending;
      pending = undefined;
      return action;
    },
  };
};
