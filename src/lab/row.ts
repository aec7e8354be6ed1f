// What every lab row (one of our strategies or a reference baseline) offers the replay: it hears each
// session entry, may act before each provider request, and keeps the model view it would send.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { entryMessages } from "../projection/project.ts";
import type { SideCall } from "./metrics.ts";
import type { View } from "./view.ts";

export interface RowInfo {
  /** Stable id used by `--strategies` and in JSON. */
  id: string;
  /** Name in tables and charts. */
  label: string;
  family: "ours" | "baseline";
  /** One line on what the row is (and, for simulations, what it models). */
  note: string;
}

/** Window settings shared by all rows of a run. */
export interface LabSettings {
  /** Context window in tokens. */
  window: number;
  /** Tokens Pi reserves for the reply; compaction triggers above window - reserve. */
  reserve: number;
  /** Recent tokens Pi keeps verbatim when it compacts. */
  keepRecent: number;
  /** Tool outputs observation masking keeps (Lindenbauer et al. 2025). */
  maskKeep: number;
  /** Anthropic-style clearing: trigger (input tokens), tool uses kept, minimum tokens cleared. */
  clearing: { trigger: number; keep: number; clearAtLeast: number };
  /** OpenCode-style prune: protected recent tool-output tokens and the minimum saving. */
  prune: { protect: number; minimum: number };
}

/** Pi's defaults for a window (reserve 16k, keep 20k), with the baselines' published defaults. */
export function defaultSettings(window: number): LabSettings {
  const reserve = 16_384;
  return {
    window,
    reserve,
    keepRecent: 20_000,
    maskKeep: 10,
    // Anthropic's default trigger is 100k input tokens; on small windows it would never fire before overflow.
    clearing: { trigger: Math.min(100_000, window - reserve), keep: 3, clearAtLeast: 0 },
    prune: { protect: 40_000, minimum: 20_000 },
  };
}

/** Tokens above which a row must act to stay inside the window. */
export function thresholdOf(settings: LabSettings): number {
  return settings.window - settings.reserve;
}

/** Something a row did to its context before a request. */
export interface ContextAction {
  /** compaction, fold, truncation, masking, clearing, prune. */
  kind: string;
  tokensBefore: number;
  /** Extra model calls the action costs (summaries). */
  sideCalls: SideCall[];
  /** True when a real run would wait on a model here (the lab cannot time it). */
  modelCall?: boolean;
}

export interface Row {
  readonly info: RowInfo;
  readonly view: View;
  /** A session entry was persisted. */
  append(entry: SessionEntry): void;
  /** A provider request is about to go out; act on the context if the row wants to. */
  beforeRequest(): Promise<ContextAction | undefined> | ContextAction | undefined;
  /** The ledger the row leaves (source entries plus its own facts), when its history stays recoverable. */
  ledger?(): readonly SessionEntry[];
}

/** The run's settings plus what belongs to the one session a row replays. */
export interface SessionSettings extends LabSettings {
  /** The session's working directory, from its header ("" when the header has none: paths stay as written). */
  cwd: string;
}

/**
 * Makes a row for one session. `replaysWith` names the rows that replay side by side with it (in step, entry by
 * entry): the rows one strategy declares share that strategy's memos, which keep only what the latest compaction
 * read. Other rows replay one after another.
 */
export type RowFactory = ((settings: SessionSettings) => Row) & { readonly replaysWith?: string };

/** Messages an entry sends to the model, as Pi builds them (entries `!!` excluded from context send none). */
export function visibleMessages(entry: SessionEntry): AgentMessage[] {
  return entryMessages(entry).filter(
    (m) => !(m.role === "bashExecution" && (m as { excludeFromContext?: boolean }).excludeFromContext),
  );
}

/** Index of a message's role, for turn logic. */
export function isTurnStart(message: AgentMessage): boolean {
  return message.role === "user" || message.role === "bashExecution" || message.role === "custom";
}
