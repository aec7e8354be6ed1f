// The checkpoint strategy's re-orientation recap that follows a checkpoint compaction: persisted as a custom message
// tagged with the compaction id, placed last on the first request after the compaction, deduplicated always.
// Every decision is derived from the active branch, so reload, resume, fork and /tree need no in-memory flag.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ExtensionContext, SessionCompactEvent, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { CompactionEntry } from "../../log/entries.ts";
import type { StrategyKit } from "../contract.ts";
import { isCheckpointCompaction, type CheckpointDetails } from "./planner.ts";
import { isRecapDetails, RECAP_TYPE, renderRecap, type RecapDetails } from "./recap.ts";
import { forTerminal } from "../../log/display.ts";

/** Recap settings; read on every event so a settings change applies without reload. */
export interface RecapSettings {
  /** Off: no recap is added, and managed copies already in history are left alone. */
  enabled: boolean;
}

/** The message Pi persists for a recap. */
export interface RecapMessage {
  customType: typeof RECAP_TYPE;
  content: string;
  display: boolean;
  details: RecapDetails;
}

/** The newest compaction on the branch when it is a checkpoint; a later native compaction ends the recap. */
export function currentCheckpoint(
  branch: readonly SessionEntry[],
): { entry: CompactionEntry<CheckpointDetails>; index: number } | undefined {
  return checkpointAt(branch, lastCompactionIndex(branch));
}

function lastCompactionIndex(branch: readonly SessionEntry[]): number {
  for (let i = branch.length - 1; i >= 0; i--) if (branch[i].type === "compaction") return i;
  return -1;
}

/** The branch and the index of its newest compaction (-1 for none), as the host already knows them. */
export interface RecapView {
  branch: readonly SessionEntry[];
  lastCompaction: number;
}

/** Fallback view for callers without a live ledger: walks the branch. */
function fullBranchView(ctx: ExtensionContext): RecapView {
  const branch = ctx.sessionManager.getBranch();
  return { branch, lastCompaction: lastCompactionIndex(branch) };
}

function checkpointAt(
  branch: readonly SessionEntry[],
  index: number,
): { entry: CompactionEntry<CheckpointDetails>; index: number } | undefined {
  const entry = branch[index];
  return entry && isCheckpointCompaction(entry) ? { entry, index } : undefined;
}

/** The recap message for a checkpoint compaction entry. */
export function recapFor(entry: CompactionEntry<CheckpointDetails>): RecapMessage {
  const stats = entry.details?.stats;
  const details: RecapDetails = {
    v: 1,
    compactionId: entry.id,
    tokensBefore: entry.tokensBefore,
    ...(typeof stats?.tokensAfter === "number" ? { tokensAfter: stats.tokensAfter } : {}),
    spans: stats?.spans ?? entry.details?.spans.length ?? 0,
    startupReads: Array.isArray(stats?.startupReads) ? stats.startupReads : [],
    trimmedSpans: stats?.trimmedSpans ?? 0,
    removedItems: stats?.removedItems ?? 0,
    shortenedItems: stats?.shortenedItems ?? 0,
  };
  const { v: _v, ...facts } = details;
  return { customType: RECAP_TYPE, content: renderRecap(facts), display: true, details };
}

/** True when a recap for `compactionId` was persisted after the compaction at `index`. */
export function hasRecapAfter(branch: readonly SessionEntry[], index: number, compactionId: string): boolean {
  for (let i = index + 1; i < branch.length; i++) {
    const entry = branch[i];
    if (
      entry.type === "custom_message" &&
      entry.customType === RECAP_TYPE &&
      isRecapDetails(entry.details) &&
      entry.details.compactionId === compactionId
    )
      return true;
  }
  return false;
}

/** True while no assistant response followed the compaction at `index`: the next request is the first one after it. */
export function isFirstRequestAfter(branch: readonly SessionEntry[], index: number): boolean {
  for (let i = index + 1; i < branch.length; i++) {
    const entry = branch[i];
    if (entry.type === "message" && (entry.message as { role?: string }).role === "assistant") return false;
  }
  return true;
}

function recapIdOf(message: AgentMessage): string | null | undefined {
  const m = message as unknown as { role?: string; customType?: string; details?: unknown };
  if (m.role !== "custom" || m.customType !== RECAP_TYPE) return undefined;
  return isRecapDetails(m.details) ? m.details.compactionId : null;
}

/**
 * Rewrite a request's messages: drop managed recaps of other compactions and duplicates of the current one;
 * on the first request after the compaction, move the current recap last (adding a fresh copy if none was
 * persisted). Returns undefined when nothing changes, so the request keeps its cached prefix.
 */
export function placeRecap(
  messages: readonly AgentMessage[],
  current: { recap: RecapMessage; firstRequest: boolean } | undefined,
  timestamp: number,
): AgentMessage[] | undefined {
  const currentId = current?.recap.details.compactionId;
  let kept: AgentMessage | undefined;
  let changed = false;
  const out: AgentMessage[] = [];
  for (const message of messages) {
    const id = recapIdOf(message);
    if (id === undefined) {
      out.push(message);
      continue;
    }
    if (id !== currentId || kept) {
      changed = true;
      continue;
    }
    kept = message;
    out.push(message);
  }
  if (current?.firstRequest) {
    const recap =
      kept ??
      ({
        role: "custom",
        customType: RECAP_TYPE,
        content: current.recap.content,
        display: current.recap.display,
        details: current.recap.details,
        timestamp,
      } as AgentMessage);
    if (out[out.length - 1] !== recap) {
      if (kept) out.splice(out.indexOf(kept), 1);
      out.push(recap);
      changed = true;
    }
  }
  return changed ? out : undefined;
}

function formatTokens(n: number | undefined): string {
  if (n === undefined) return "?";
  return n >= 10_000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** One-line card for the transcript; the expanded view shows the recap text the model received. */
export function recapCard(details: RecapDetails): string {
  const parts = [
    `checkpoint ${formatTokens(details.tokensBefore)} → ${formatTokens(details.tokensAfter)} tokens`,
    `${details.spans} span${details.spans === 1 ? "" : "s"}`,
    `${details.startupReads.length} startup read${details.startupReads.length === 1 ? "" : "s"} kept`,
  ];
  if (details.trimmedSpans > 0) {
    const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
    parts.push(
      `trimmed: ${plural(details.trimmedSpans, "span")}, ${plural(details.removedItems, "item")} removed, ${details.shortenedItems} shortened`,
    );
  }
  return `Context checkpoint · ${parts.join(" · ")}`;
}

/**
 * The recap's hooks: `beforeAgentStart` persists it on the next run when missing, `sessionCompact` steers it into a
 * run that is still going (threshold mid-run, overflow retry), and `contextWithSystem` places it and removes stale copies. Also
 * registers the transcript card. `view` gives the branch and its newest effective compaction.
 */
export function recapHooks(
  kit: Pick<StrategyKit<unknown>, "sendMessage" | "registerMessageCard">,
  getSettings: () => RecapSettings,
  view: (ctx: ExtensionContext) => RecapView = fullBranchView,
) {
  // Only guards against adding a second copy while a steered one waits in Pi's queue; placement never uses it.
  let steeredFor: string | undefined;
  // True between agent_start and agent_end. Pi checks the threshold again after a run's final answer (and before
  // a prompt) with the session still busy, so isIdle() cannot tell those apart from a compaction mid-run.
  let runActive = false;

  const checkpointOn = (ctx: ExtensionContext) => {
    if (!getSettings().enabled) return undefined;
    const { branch, lastCompaction } = view(ctx);
    const found = checkpointAt(branch, lastCompaction);
    return found ? { branch, ...found } : undefined;
  };

  kit.registerMessageCard<RecapDetails>(RECAP_TYPE, ({ content, details }, options) => {
    const card = isRecapDetails(details) ? recapCard(details) : "Context checkpoint recap";
    return options.expanded ? `${card}\n\n${content}` : card;
  });

  return {
    agentStart(): void {
      runActive = true;
    },
    agentEnd(): void {
      runActive = false;
    },
    sessionCompact(event: SessionCompactEvent, ctx: ExtensionContext): void {
      if (!isCheckpointCompaction(event.compactionEntry)) return;
      // The planner is pure, so its warnings (startup reads over the cap) surface here.
      for (const warning of event.compactionEntry.details?.warnings ?? [])
        ctx.ui.notify(forTerminal(`context-ledger: ${warning}`), "warning");
      if (!getSettings().enabled) return;
      // Steer only into a run that goes on: mid-run, or the overflow retry Pi is about to start. A steered message
      // after the final answer would make Pi continue the run, a model turn nobody asked for. Idle and post-run
      // compactions leave the recap to the next run's start, which adds it with the next prompt.
      if (!event.willRetry && (!runActive || ctx.isIdle())) return;
      steeredFor = event.compactionEntry.id;
      kit.sendMessage(recapFor(event.compactionEntry), { deliverAs: "steer" });
    },
    beforeAgentStart(ctx: ExtensionContext): { message: RecapMessage } | undefined {
      const found = checkpointOn(ctx);
      if (!found || steeredFor === found.entry.id || hasRecapAfter(found.branch, found.index, found.entry.id))
        return undefined;
      return { message: recapFor(found.entry) };
    },
    contextWithSystem(messages: AgentMessage[], ctx: ExtensionContext): AgentMessage[] | undefined {
      if (!getSettings().enabled) return undefined;
      // Runs before every request: the view is the live ledger's path, so no branch walk happens here.
      const { branch, lastCompaction } = view(ctx);
      // Recaps only ever follow a compaction on the path, so a path without one has nothing to place or remove.
      if (lastCompaction < 0) return undefined;
      const found = checkpointAt(branch, lastCompaction);
      if (found && hasRecapAfter(branch, found.index, found.entry.id)) steeredFor = undefined;
      const current = found
        ? { recap: recapFor(found.entry), firstRequest: isFirstRequestAfter(branch, found.index) }
        : undefined;
      const timestamp = found ? Date.parse(found.entry.timestamp) : 0;
      return placeRecap(messages, current, timestamp);
    },
  };
}
