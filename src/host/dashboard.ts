// The /context dashboard: a plain-text report of the branch as the ledger sees it.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { LedgerType, textOf } from "../log/entries.ts";
import { keptFrom } from "../projection/ledger-state.ts";
import { estimateTextTokens } from "../projection/tokens.ts";
import { plannedUsage, usageLines } from "../strategies/planned/report.ts";
import type { LedgerSession } from "./ledger-session.ts";

export function renderDashboard(session: LedgerSession, ctx: Pick<ExtensionContext, "getContextUsage">): string {
  const live = session.live;
  const state = live.state;
  const usage = ctx.getContextUsage();
  const lines: string[] = ["Context ledger"];
  if (usage) {
    const percent = usage.percent === null ? "?" : `${Math.round(usage.percent)}%`;
    lines.push(`  usage: ${usage.tokens ?? "?"} / ${usage.contextWindow} tokens (${percent})`);
  }
  lines.push(`  strategy: ${session.settings.strategy}; estimator calibration x${session.calibration.ratio.toFixed(2)} (${session.calibration.samples} samples)`);
  let hidden = 0;
  live.entries.forEach((entry) => {
    if (live.isFolded(entry.id)) hidden++;
  });
  lines.push(`  branch: ${live.entries.length} entries, ${hidden} hidden by folds`);
  const labels = Object.entries(state.labels);
  lines.push(`  checkpoints: ${labels.length ? labels.map(([id, l]) => `${l} (${id})`).join(", ") : "none"}`);
  for (const fold of state.folds) {
    const entry = live.getEntry(fold.entryId);
    const size = entry?.type === "custom_message" ? estimateTextTokens(textOf(entry.content)) : 0;
    const kind = !fold.anchored ? "fold" : entry?.type === "custom_message" && entry.customType === LedgerType.digest ? "digest" : "preserve checkpoint";
    const hides = fold.keepDialogue ? "tool traffic" : "history";
    const narrowed = fold.narrowedBy ? `; newest part restored by ${fold.narrowedBy}` : "";
    lines.push(
      `  ${kind} ${fold.entryId}: hides ${hides} after ${fold.afterId ?? "root"} through ${fold.throughId}, ~${size} tokens${live.isFolded(fold.entryId) ? " (itself folded later)" : ""}${narrowed}`,
    );
  }
  for (const c of state.compactions) {
    const status = state.revoked[c.entryId] ? ` (revoked by restore ${state.revoked[c.entryId]})` : c.narrowedBy ? ` (newest part restored by ${c.narrowedBy})` : "";
    if (c.marker) lines.push(`  compaction ${c.entryId}: preserve checkpoint marker (manual /compact; hides nothing)`);
    else lines.push(`  compaction ${c.entryId}: ${c.strategy}, kept from ${keptFrom(c)}${status}`);
  }
  // Revoked folds and checkpoints have left the rules; they are listed so the undo stays visible.
  for (const [act, by] of Object.entries(state.revoked)) {
    const entry = live.getEntry(act);
    if (entry?.type === "custom_message") {
      const kind = entry.customType === LedgerType.preserve ? "preserve checkpoint" : entry.customType === LedgerType.digest ? "digest" : "fold";
      lines.push(`  ${kind} ${act}: revoked by restore ${by}`);
    }
  }
  lines.push(...usageLines(plannedUsage(live.entries)));
  return lines.join("\n");
}
