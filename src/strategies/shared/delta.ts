// The technical delta of a preserve checkpoint: visible tool traffic and unfinished assistant turns after the previous
// checkpoint, cut into indivisible units and grouped by the user message that caused them. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { CustomMessageEntry, RangeDetails, SessionEntry } from "../../log/entries.ts";
import { isToolCheckpoint, LEDGER_FACTS } from "../catalog.ts";
import { isCompletedAnswer, isDialogue, isFoldable } from "../../projection/ranges.ts";
import { type ProjectedEntry, projectBranch } from "../../projection/project.ts";
import { accountView, type ViewAccounting } from "./accounting.ts";
import { estimateMessagesTokens } from "../../projection/tokens.ts";
import { BranchFold } from "./branch-fold.ts";

/**
 * An indivisible piece of technical state: an assistant turn with the tool results answering it, or one custom
 * message. A checkpoint boundary never falls inside a unit, so a call is never separated from its results.
 */
export interface DeltaUnit {
  /** Absolute 1-based ordinal of the user message that started this work (0: before any user message). */
  ordinal: number;
  entryIds: string[];
  /** What the model currently sees of these entries (context edits applied). */
  messages: AgentMessage[];
  /** Estimated tokens of `messages`. */
  tokens: number;
}

/** All technical state a checkpoint could hide now. */
export interface Delta {
  /** Exclusive start: the previous checkpoint's `throughId`, or null for the first checkpoint. */
  afterId: string | null;
  /** Last eligible entry (the one before the current assistant message, or the leaf for a manual request). */
  limitId: string;
  units: DeltaUnit[];
  /** 1-based number the next checkpoint gets on this branch. */
  checkpoint: number;
  tokens: number;
  /** What the model view held at selection time, for the checkpoint's token accounting. */
  view: ViewAccounting;
}

/** Previous tool checkpoints (preserve or digest) on the branch, oldest first: each new one continues after the last. */
export function checkpointsOn(branch: readonly SessionEntry[]): CustomMessageEntry<RangeDetails>[] {
  return branch.filter(isToolCheckpoint);
}

/** The entry right before `assistantId` on the branch: the newest entry a turn_end checkpoint may cover. */
export function entryBefore(branch: readonly SessionEntry[], assistantId: string): string | undefined {
  const i = branch.findIndex((e) => e.id === assistantId);
  return i > 0 ? branch[i - 1].id : undefined;
}

function isTechnical(entry: SessionEntry): boolean {
  return isFoldable(entry) && !isDialogue(entry, LEDGER_FACTS) && !isToolCheckpoint(entry);
}

function pendingCalls(message: AgentMessage): Set<string> {
  const ids = new Set<string>();
  if (message.role === "assistant") for (const b of message.content ?? []) if (b.type === "toolCall") ids.add(b.id);
  return ids;
}

/** The reasoning blocks of a visible completed answer, as an assistant message of their own (none: undefined). */
function reasoningOf(messages: AgentMessage[] | undefined): AgentMessage | undefined {
  const message = messages?.[0];
  if (message?.role !== "assistant") return undefined;
  const thinking = message.content.filter((b) => b.type === "thinking");
  return thinking.length ? { ...message, content: thinking } : undefined;
}

/** What {@link selectDelta} looks up on the whole branch, kept per branch array as it grows ({@link BranchFold}). */
interface DeltaIndex {
  /** Index of each id's first entry (what a scan from the root finds). */
  first: Map<string, number>;
  /** Index of the last entry of each id seen more than once (a malformed file). */
  repeated: Map<string, number>;
  /** users[i]: user messages among entries 0..i. */
  users: number[];
  /** Indexes of the tool checkpoints, oldest first. */
  checkpoints: number[];
  /** Indexes of the first two user messages. */
  firstUsers: number[];
}

const deltaIndex = new BranchFold<DeltaIndex>(
  () => ({ first: new Map(), repeated: new Map(), users: [], checkpoints: [], firstUsers: [] }),
  (index, entry, i) => {
    if (index.first.has(entry.id)) index.repeated.set(entry.id, i);
    else index.first.set(entry.id, i);
    const user = entry.type === "message" && (entry.message as { role?: unknown } | null)?.role === "user";
    index.users.push((i > 0 ? index.users[i - 1] : 0) + (user ? 1 : 0));
    if (user && index.firstUsers.length < 2) index.firstUsers.push(i);
    if (isToolCheckpoint(entry)) index.checkpoints.push(i);
  },
);

/** What a planner may look up on a branch without scanning it (kept per branch array, see {@link BranchFold}). */
export interface BranchLookup {
  /** Index of the first entry with `id` (what `findIndex` from the root gives), or -1. */
  indexOf(id: string): number;
  /** Indexes of the first two user messages, as far as the branch has them. */
  firstUsers: readonly number[];
  /** True when no id appears twice on the branch (always, but in a malformed file). */
  unique: boolean;
  /** Index of the newest tool checkpoint, or -1. */
  lastCheckpoint: number;
}

/** The branch's {@link BranchLookup}, brought up to date with the entries appended since the last call. */
export function branchLookup(branch: readonly SessionEntry[]): BranchLookup {
  const index = deltaIndex.of(branch);
  return {
    indexOf: (id) => index.first.get(id) ?? -1,
    firstUsers: index.firstUsers,
    unique: index.repeated.size === 0,
    lastCheckpoint: index.checkpoints.length ? index.checkpoints[index.checkpoints.length - 1] : -1,
  };
}

/**
 * The view's messages of the entries in (after, limit], by entry id, and where the selection's walk starts. With
 * unique ids the view tells the first visible entry, and the walk starts there: what lies before it (the steps a
 * compaction left behind) opens no unit, so a walk over it would only read entries, as many as the session holds.
 * With a repeated id (a malformed file) an id does not tell its position: the walk covers the whole interval.
 */
function visibleTail(
  branch: readonly SessionEntry[],
  index: DeltaIndex,
  projected: readonly ProjectedEntry[],
  after: number,
  limit: number,
): { visible: Map<string, AgentMessage[]>; start: number } {
  const visible = new Map<string, AgentMessage[]>();
  if (index.repeated.size === 0) {
    let start = limit + 1;
    for (const p of projected) {
      if (!p.messages.length) continue;
      const i = index.first.get(p.sourceEntry.id) ?? -1;
      if (i <= after || i > limit) continue;
      visible.set(p.sourceEntry.id, p.messages);
      if (i < start) start = i;
    }
    return { visible, start };
  }
  // Only the entries in (after, limit] are looked up: the view's other messages are never read here.
  const tail = new Set<string>();
  for (let i = after + 1; i <= limit; i++) tail.add(branch[i].id);
  for (const p of projected)
    if (p.messages.length && tail.has(p.sourceEntry.id)) visible.set(p.sourceEntry.id, p.messages);
  return { visible, start: after + 1 };
}

/**
 * Select the technical delta in (previous checkpoint, `limitId`]. Only entries the model sees right now count: state
 * already hidden by a fold or left behind by a compaction is not summarized again. The branch is looked up in an
 * index kept per branch array, so a selection costs one pass over the view and the entries from the first one it shows
 * after the previous checkpoint, not a pass over the whole branch. `view.accounting` is computed when first read, from `view` as passed.
 */
export function selectDelta(
  branch: readonly SessionEntry[],
  limitId: string,
  view?: readonly ProjectedEntry[],
): Delta | undefined {
  const index = deltaIndex.of(branch);
  const limit = index.first.get(limitId) ?? -1;
  if (limit < 0) return undefined;
  // The whole branch is "now": its checkpoints, folds and compactions decide what is still raw and visible.
  const checkpoints = index.checkpoints.length;
  const last = checkpoints
    ? (branch[index.checkpoints[checkpoints - 1]] as CustomMessageEntry<RangeDetails>)
    : undefined;
  const afterId = last?.details?.range.throughId ?? null;
  const after = afterId === null ? -1 : (index.first.get(afterId) ?? -1);

  const projected = view ?? projectBranch(branch, LEDGER_FACTS).entries;
  const { visible, start } = visibleTail(branch, index, projected, after, limit);

  const units: DeltaUnit[] = [];
  // User messages before `start` count towards the ordinals of the entries from it.
  let ordinal = start > 0 ? index.users[start - 1] : 0;
  let open: { unit: DeltaUnit; waiting: Set<string> } | undefined;
  for (let i = start; i <= limit; i++) {
    const entry = branch[i];
    if (entry.type === "message" && entry.message.role === "user") ordinal++;
    if (!isTechnical(entry)) {
      if (isDialogue(entry, LEDGER_FACTS)) open = undefined; // dialogue closes a unit: the next work starts a new one
      // A completed answer's reasoning is technical state: its own unit, while the visible text stays dialogue.
      const reasoning = isCompletedAnswer(entry) ? reasoningOf(visible.get(entry.id)) : undefined;
      if (reasoning)
        units.push({
          ordinal,
          entryIds: [entry.id],
          messages: [reasoning],
          tokens: estimateMessagesTokens([reasoning]),
        });
      continue;
    }
    const messages = visible.get(entry.id);
    if (!messages) continue;
    const role = entry.type === "message" ? entry.message.role : "custom";
    // Tool results (and custom messages arriving while calls are unanswered) stay with their assistant turn.
    const joins = open && (role === "toolResult" || (role === "custom" && open.waiting.size > 0));
    if (!joins) {
      open = { unit: { ordinal, entryIds: [], messages: [], tokens: 0 }, waiting: new Set() };
      units.push(open.unit);
    }
    const unit = open!.unit;
    unit.entryIds.push(entry.id);
    unit.messages.push(...messages);
    unit.tokens += estimateMessagesTokens(messages);
    if (role === "assistant") open!.waiting = pendingCalls(entry.type === "message" ? entry.message : messages[0]);
    if (role === "toolResult" && entry.type === "message" && entry.message.role === "toolResult")
      open!.waiting.delete(entry.message.toolCallId);
  }
  // A position is an id's last entry on the branch as it is now (ids repeat only in a malformed file).
  const repeated = new Map(index.repeated);
  const position = (id: string) => repeated.get(id) ?? index.first.get(id) ?? -1;
  let accounting: ViewAccounting | undefined;
  return {
    afterId,
    limitId,
    units,
    checkpoint: checkpoints + 1,
    tokens: units.reduce((sum, u) => sum + u.tokens, 0),
    // Only a checkpoint's token accounting reads this; a digest never does, so it is not paid for there.
    get view() {
      accounting ??= accountView(projected, position, limit);
      return accounting;
    },
  };
}

/** Absolute user ordinals a list of units covers, ascending and unique. */
export function ordinalsOf(units: readonly DeltaUnit[]): number[] {
  return [...new Set(units.map((u) => u.ordinal))].sort((a, b) => a - b);
}

export type FitResult =
  | { ok: true; included: DeltaUnit[]; carried: DeltaUnit[]; throughId: string }
  | { ok: false; error: string };

/**
 * Take the largest older prefix of units whose cost fits `budget`; the newest suffix stays raw and is eligible for a
 * later checkpoint. When everything fits the rule ends at the delta's limit. A first unit that cannot fit alone fails
 * closed: dropping it silently would lose tool evidence nobody summarized.
 */
export function fitDelta(delta: Delta, budget: number, cost: (unit: DeltaUnit) => number): FitResult {
  if (!delta.units.length) return { ok: false, error: "there is no technical state to summarize" };
  let used = 0;
  let n = 0;
  for (const unit of delta.units) {
    const c = cost(unit);
    if (used + c > budget) break;
    used += c;
    n++;
  }
  if (n === 0) {
    const first = delta.units[0];
    return {
      ok: false,
      error: `a single tool step (${first.entryIds.length} entries, ~${cost(first)} tokens, user message ${first.ordinal}) does not fit the summary request budget of ~${budget} tokens; nothing was summarized`,
    };
  }
  const included = delta.units.slice(0, n);
  const carried = delta.units.slice(n);
  const throughId = carried.length ? included[n - 1].entryIds.at(-1)! : delta.limitId;
  return { ok: true, included, carried, throughId };
}
