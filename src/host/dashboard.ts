// The /context dashboard: a plain-text report of the branch as the ledger sees it.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { quoted, shownName } from "../log/display.ts";
import { textOf } from "../log/entries.ts";
import { RangeMask } from "../projection/ranges.ts";
import type { LiveLedger } from "../projection/live-ledger.ts";
import {
  activePins,
  isUnreadableRestore,
  keptFrom,
  type CompactionFact,
  type RangeRule,
} from "../projection/ledger-state.ts";
import { entryMessages, viewCut } from "../projection/project.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../projection/tokens.ts";
import { PLUGINS } from "../strategies/registry.ts";
import type { LedgerSession } from "./ledger-session.ts";

const count = (n: number) => n.toLocaleString("en-US");
/** A count and its noun, singular for one. */
const counted = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;
const entries = (n: number) => counted(n, "entry", "entries");

/** The word each strategy's facts go by, from the registry: a custom message's customType, or a strategy's name. */
function factWord(customType: string | undefined): string | undefined {
  for (const strategy of PLUGINS)
    if (customType !== undefined && strategy.facts?.[customType]) return strategy.facts[customType];
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
  const mask = new RangeMask([rule], { indexOf: (id) => live.indexOf(id), get: (id) => live.getEntry(id) }, live.facts);
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
 * Entries a compaction summarized, by the same accounting as a range's: the entries carrying messages from the start
 * the compaction before it kept (the root for the first) up to its own kept start, with their estimated tokens.
 */
function cutBy(
  live: LiveLedger,
  compaction: CompactionFact,
  from: number,
): { entries: number; tokens: number; through: number } {
  const at = live.indexOf(compaction.entryId);
  const kept = live.indexOf(keptFrom(compaction));
  const through = kept >= 0 && kept < at ? kept : at;
  let n = 0;
  let tokens = 0;
  for (let i = Math.max(0, from); i < through; i++) {
    const entry = live.entries[i];
    if (entry.type === "compaction") continue;
    const messages = entryMessages(entry);
    if (!messages.length) continue;
    n++;
    tokens += estimateMessagesTokens(messages);
  }
  return { entries: n, tokens, through };
}

/**
 * True when the ledger changed the view after the newest response on the branch: Pi's usage figure comes from that
 * response, so it describes the view as it was (a restore, a fold or a digest appended since changed it).
 */
function viewChangedSinceResponse(live: LiveLedger): boolean {
  for (let i = live.entries.length - 1; i >= 0; i--) {
    const entry = live.entries[i];
    if (entry.type === "message" && entry.message.role === "assistant") return false;
    const kind = live.facts.read(entry).kind;
    if (kind === "restore" || kind === "range") return true;
  }
  return false;
}

/**
 * The `/context` report. `details` adds what only a maintainer needs (the token estimator's calibration).
 */
export function renderDashboard(
  session: LedgerSession,
  ctx: Pick<ExtensionContext, "getContextUsage">,
  options: { details?: boolean } = {},
): string {
  const live = session.live;
  const state = live.state;
  const usage = ctx.getContextUsage();
  const lines: string[] = ["Context ledger"];
  if (usage) {
    // Right after a compaction Pi knows no usage until the next response; the ledger's own estimate stands in.
    if (usage.tokens === null)
      lines.push(
        `  usage: ~${count(live.estimateViewTokens())} / ${count(usage.contextWindow)} tokens (estimated; Pi reports usage after the next response)`,
      );
    else if (viewChangedSinceResponse(live))
      lines.push(
        `  usage: ~${count(live.estimateViewTokens())} / ${count(usage.contextWindow)} tokens (estimated: the context changed after Pi's last figure, ${count(usage.tokens)}; Pi reports usage after the next response)`,
      );
    else
      lines.push(
        `  usage: ${count(usage.tokens)} / ${count(usage.contextWindow)} tokens (${usage.percent === null ? "share unknown" : `${Math.round(usage.percent)}%`})`,
      );
  }
  lines.push(`  strategy: ${session.settings.strategy}`);
  if (options.details)
    lines.push(
      `  estimator calibration x${session.calibration.ratio.toFixed(2)} (${session.calibration.samples} samples)`,
    );
  let hidden = 0;
  live.entries.forEach((entry) => {
    if (live.isHidden(entry.id)) hidden++;
  });
  // What the newest compaction in effect left out of the view, counted like the compaction lines below.
  const cut = viewCut(state, (id) => live.indexOf(id));
  let summarized = 0;
  for (let i = 0; cut.head >= 0 && i < cut.from; i++)
    if (live.entries[i].type !== "compaction" && entryMessages(live.entries[i]).length) summarized++;
  lines.push(
    `  branch: ${entries(live.entries.length)}, ${count(hidden)} hidden by ranges, ${count(summarized)} summarized by compactions`,
  );
  const labels = Object.entries(state.labels);
  lines.push(
    `  labels: ${labels.length ? labels.map(([id, l]) => `${shownName(l)} (${shownName(id)})`).join(", ") : "none"}`,
  );
  for (const rule of state.ranges) {
    const entry = live.getEntry(rule.entryId);
    const size = entry?.type === "custom_message" ? estimateTextTokens(textOf(entry.content)) : 0;
    // An unanchored rule is the model's own fold; an anchored one belongs to the strategy whose fact it is.
    const kind = (entry?.type === "custom_message" ? factWord(entry.customType) : undefined) ?? "range";
    const hides = rule.keepDialogue ? "tool traffic" : "history";
    const narrowed = rule.narrowedBy ? `; newest part restored by ${rule.narrowedBy}` : "";
    const hid = hiddenBy(live, rule);
    lines.push(
      `  ${kind} ${rule.entryId}: hides ${hides} after ${nameOf(live, rule.afterId)} through ${nameOf(live, rule.throughId)}; hid ${entries(hid.entries)} (~${count(hid.tokens)} tokens), summary ~${count(size)} tokens${live.isHidden(rule.entryId) ? " (itself folded later)" : ""}${narrowed}`,
    );
  }
  let summarizedFrom = 0;
  for (const c of state.compactions) {
    const unreadable = isUnreadableRestore(c, (id) => live.indexOf(id));
    const status = state.revoked[c.entryId]
      ? ` (revoked by restore ${state.revoked[c.entryId]})`
      : unreadable
        ? ` (restore ${c.narrowedBy} names no earlier entry ${shownName(c.keptFromId)}; ignored, the view keeps from Pi's cut)`
        : c.narrowedBy
          ? ` (newest part restored by ${c.narrowedBy})`
          : "";
    if (c.marker) {
      lines.push(`  compaction ${c.entryId}: ${shownName(c.strategy)} marker (manual /compact; hides nothing)`);
      continue;
    }
    const entry = live.getEntry(c.entryId);
    const summary = entry?.type === "compaction" ? estimateTextTokens(entry.summary) : 0;
    const keptName = nameOf(live, unreadable ? c.firstKeptEntryId : keptFrom(c));
    if (state.revoked[c.entryId]) {
      lines.push(`  compaction ${c.entryId}: ${shownName(c.strategy)}, kept from ${keptName}${status}`);
      continue;
    }
    const hid = cutBy(live, c, summarizedFrom);
    summarizedFrom = hid.through;
    lines.push(
      `  compaction ${c.entryId}: ${shownName(c.strategy)}, kept from ${keptName}; summarized ${entries(hid.entries)} (~${count(hid.tokens)} tokens), summary ~${count(summary)} tokens${status}`,
    );
  }
  // Revoked folds, tool summaries and digests have left the ranges; they are listed so the undo stays visible.
  for (const [act, by] of Object.entries(state.revoked)) {
    const entry = live.getEntry(act);
    if (entry?.type === "custom_message") {
      const kind = factWord(entry.customType) ?? "act";
      lines.push(`  ${kind} ${act}: revoked by restore ${by}`);
    }
  }
  // Pins: how many, what they hold, and the budget (the listing itself is `/context pins`).
  const pins = activePins(state);
  if (pins.length) {
    let tokens = 0;
    for (const i of live.pinnedIndexes()) tokens += live.entryTokens(i);
    const budget = Math.floor((usage?.contextWindow ?? 0) * session.settings.pins.maxShare);
    lines.push(
      `  pins: ${pins.length} holding ${count(live.pinnedIndexes().length)} entries (~${count(tokens)} tokens${budget ? ` of ${count(budget)} allowed` : ""}); /context pins lists them`,
    );
  } else lines.push("  pins: none");
  for (const strategy of PLUGINS) lines.push(...(strategy.dashboard?.(live.entries) ?? []));
  return lines.join("\n");
}
