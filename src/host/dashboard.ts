// The /context dashboard: a plain-text report of the branch as the ledger sees it.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { quoted, shownName } from "../log/display.ts";
import { textOf } from "../log/entries.ts";
import { RangeMask } from "../projection/ranges.ts";
import type { LiveLedger } from "../projection/live-ledger.ts";
import { isUnreadableRestore, keptFrom, type RangeRule } from "../projection/ledger-state.ts";
import { entryMessages } from "../projection/project.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../projection/tokens.ts";
import { PLUGINS } from "../strategies/registry.ts";
import type { LedgerSession } from "./ledger-session.ts";

const count = (n: number) => n.toLocaleString("en-US");

/** The word each strategy's facts go by, from the registry: a custom message's customType, or a strategy's name. */
function factWord(customType: string | undefined): string | undefined {
  for (const strategy of PLUGINS) if (customType !== undefined && strategy.facts?.[customType]) return strategy.facts[customType];
  return undefined;
}

/** An entry as a person finds it: its label first when it has one. */
function nameOf(live: LiveLedger, id: string | null): string {
  if (id === null) return "root";
  const label = live.state.labels[id];
  return label ? `${quoted(label)} (${shownName(id)})` : shownName(id);
}

/** Entries one range hides on the path, and their estimated tokens (exemptions honoured). */
function hiddenBy(live: LiveLedger, rule: RangeRule): { entries: number; tokens: number } {
  const mask = new RangeMask([rule], { indexOf: (id) => live.indexOf(id), get: (id) => live.getEntry(id) });
  const from = rule.afterId === null ? 0 : live.indexOf(rule.afterId) + 1;
  const through = live.indexOf(rule.throughId);
  let entries = 0;
  let tokens = 0;
  for (let i = from; i >= 0 && i <= through; i++) {
    const entry = live.entries[i];
    if (!mask.hides(entry, i)) continue;
    entries++;
    tokens += estimateMessagesTokens(entryMessages(entry));
  }
  return { entries, tokens };
}

/**
 * The `/context` report. `details` adds what only a maintainer needs (the token estimator's calibration).
 */
export function renderDashboard(session: LedgerSession, ctx: Pick<ExtensionContext, "getContextUsage">, options: { details?: boolean } = {}): string {
  const live = session.live;
  const state = live.state;
  const usage = ctx.getContextUsage();
  const lines: string[] = ["Context ledger"];
  if (usage) {
    // Right after a compaction Pi knows no usage until the next response; the ledger's own estimate stands in.
    if (usage.tokens === null) lines.push(`  usage: ~${count(live.estimateViewTokens())} / ${count(usage.contextWindow)} tokens (estimated; Pi reports usage after the next response)`);
    else lines.push(`  usage: ${count(usage.tokens)} / ${count(usage.contextWindow)} tokens (${usage.percent === null ? "share unknown" : `${Math.round(usage.percent)}%`})`);
  }
  lines.push(`  strategy: ${session.settings.strategy}`);
  if (options.details) lines.push(`  estimator calibration x${session.calibration.ratio.toFixed(2)} (${session.calibration.samples} samples)`);
  let hidden = 0;
  live.entries.forEach((entry) => {
    if (live.isHidden(entry.id)) hidden++;
  });
  lines.push(`  branch: ${live.entries.length} entries, ${hidden} hidden by ranges`);
  const labels = Object.entries(state.labels);
  lines.push(`  labels: ${labels.length ? labels.map(([id, l]) => `${shownName(l)} (${shownName(id)})`).join(", ") : "none"}`);
  for (const rule of state.ranges) {
    const entry = live.getEntry(rule.entryId);
    const size = entry?.type === "custom_message" ? estimateTextTokens(textOf(entry.content)) : 0;
    // An unanchored rule is the model's own fold; an anchored one belongs to the strategy whose fact it is.
    const kind = (entry?.type === "custom_message" ? factWord(entry.customType) : undefined) ?? "range";
    const hides = rule.keepDialogue ? "tool traffic" : "history";
    const narrowed = rule.narrowedBy ? `; newest part restored by ${rule.narrowedBy}` : "";
    const hid = hiddenBy(live, rule);
    lines.push(
      `  ${kind} ${rule.entryId}: hides ${hides} after ${nameOf(live, rule.afterId)} through ${nameOf(live, rule.throughId)}; hid ${count(hid.entries)} entries (~${count(hid.tokens)} tokens), summary ~${count(size)} tokens${live.isHidden(rule.entryId) ? " (itself folded later)" : ""}${narrowed}`,
    );
  }
  for (const c of state.compactions) {
    const unreadable = isUnreadableRestore(c, (id) => live.indexOf(id));
    const status = state.revoked[c.entryId]
      ? ` (revoked by restore ${state.revoked[c.entryId]})`
      : unreadable
        ? ` (restore ${c.narrowedBy} names no earlier entry ${shownName(c.keptFromId)}; ignored, the view keeps from Pi's cut)`
        : c.narrowedBy
          ? ` (newest part restored by ${c.narrowedBy})`
          : "";
    if (c.marker) lines.push(`  compaction ${c.entryId}: ${shownName(c.strategy)} marker (manual /compact; hides nothing)`);
    else lines.push(`  compaction ${c.entryId}: ${shownName(c.strategy)}, kept from ${nameOf(live, unreadable ? c.firstKeptEntryId : keptFrom(c))}${status}`);
  }
  // Revoked folds, tool summaries and digests have left the ranges; they are listed so the undo stays visible.
  for (const [act, by] of Object.entries(state.revoked)) {
    const entry = live.getEntry(act);
    if (entry?.type === "custom_message") {
      const kind = factWord(entry.customType) ?? "act";
      lines.push(`  ${kind} ${act}: revoked by restore ${by}`);
    }
  }
  for (const strategy of PLUGINS) lines.push(...(strategy.dashboard?.(live.entries) ?? []));
  return lines.join("\n");
}
