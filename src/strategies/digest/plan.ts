// The digest strategy's one decision, shared by the host (at turn_end, on /compact) and the lab: whether to act now,
// which older steps to cover, and the custom message that covers them. Deterministic; pure: no I/O, no clock.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  ContextEditEntry,
  CustomMessageEntry,
  HiddenRange,
  RangeDetails,
  SessionEntry,
} from "../../log/entries.ts";
import { isDigestEntry, LedgerType, LEDGER_FACTS } from "../catalog.ts";
import { isDialogue, isFoldable } from "../../projection/ranges.ts";
import { entryMessages, type ProjectedEntry, projectBranch } from "../../projection/project.ts";
import { estimateMessagesTokens, estimateTextTokens } from "../../projection/tokens.ts";
import { scanStartupReads } from "../shared/startup-reads.ts";
import type { ContextFile } from "../contract.ts";
import { BranchFold } from "../shared/branch-fold.ts";
import { type BranchLookup, branchLookup, ordinalsOf, selectDelta, type DeltaUnit } from "../shared/delta.ts";
import { viewFloor } from "../shared/view-floor.ts";
import type { NameSet } from "./lines.ts";
import { NameTable } from "./name-table.ts";
import { decideDigest, digestPolicy, type DigestPolicy } from "./policy.ts";
import { forgetCanonicalNames, renderDigest, type RenderStats } from "./render.ts";
import { findSuperseded } from "./supersede.ts";
import { stepFiles, tailStart, type WorkStep } from "./working-set.ts";

/** Why a digest was written. */
export type DigestTrigger = "batch" | "window" | "manual";

/** Token accounting persisted with every digest (the package's one estimator). */
export interface DigestTokens {
  /** Context usage when the digest was decided (null when unknown). */
  contextBefore: number | null;
  /** Raw technical state the range hides. */
  hidden: number;
  /** Raw technical state deliberately left after the range (the newest steps), not counting the current step. */
  keptRaw: number;
  /** The digest message itself. */
  digest: number;
}

/** `details` of a `context-ledger/digest` custom message. */
export interface DigestDetails {
  v: 1;
  strategy: "digest";
  /** 1-based number among the tool checkpoints of the branch. */
  checkpoint: number;
  range: HiddenRange & { keepDialogue: true };
  /** Absolute user-message ordinals whose work this digest covers. */
  userOrdinals: number[];
  trigger: DigestTrigger;
  tokens: DigestTokens;
  steps: RenderStats;
}

/** The boundary draft the host returns from turn_end (or sends on /compact). */
export interface DigestDraft {
  type: "custom_message";
  customType: typeof LedgerType.digest;
  content: string;
  display: true;
  details: DigestDetails;
}

/** Everything a digest decision looks at. */
export interface DigestInput {
  /** Active branch, root to leaf. */
  branch: readonly SessionEntry[];
  /** Newest entry a digest may cover: the one before the current step's assistant message (or the leaf on /compact). */
  limitId: string;
  contextWindow: number;
  /** Current context size, when known. */
  usageTokens: number | null;
  /** Session working directory, to compare file paths. */
  cwd: string;
  /** Cover every raw step up to the limit now, whatever the batch: `/compact`, or Pi's threshold compaction. */
  force?: "manual" | "window";
  /** Project instruction files Pi loaded; the reads they name at the start of a task are quoted whole. */
  contextFiles?: readonly ContextFile[];
  systemPrompt?: string;
  /** Sizes to use instead of the window's defaults (tests and the lab's trade-off sweep). */
  policy?: DigestPolicy;
  /**
   * The branch's model view when the caller keeps it live: exactly `projectBranch(branch, LEDGER_FACTS).entries`.
   * Without it the branch is projected here, which costs a pass over the whole branch at every decision.
   */
  view?: readonly ProjectedEntry[];
}

export type DigestOutcome = { ok: true; draft: DigestDraft } | { ok: false; reason: string };

/** Why a digest that saves nothing is declined: the one decline that waits for its tail to grow ({@link keptAttempt}). */
export const NOT_SMALLER = "the digest would not be smaller than the steps it covers";

/** The oldest units to digest and the newest ones to keep raw: at least `keepRaw` tokens stay, in whole units. */
export function splitTail(units: readonly DeltaUnit[], keepRaw: number): { included: DeltaUnit[]; kept: DeltaUnit[] } {
  let cut = units.length;
  let kept = 0;
  while (cut > 0 && kept < keepRaw) kept += units[--cut].tokens;
  return { included: units.slice(0, cut), kept: units.slice(cut) };
}

/** Steps counted as the working set's recency when the policy names none. */
const HOT_STEPS = 12;

/** Files the steps after `limit` (the current step, not digested yet) touched. */
function currentTouches(branch: readonly SessionEntry[], limit: number, cwd: string): string[] {
  const messages = branch.slice(limit + 1).flatMap((entry) => (isFoldable(entry) ? entryMessages(entry) : []));
  return stepFiles(messages, cwd).touched;
}

/**
 * The units to digest and the ones to keep raw. With a working-set cap in the decision the tail reaches back to the
 * newest read of each file the agent is working on ({@link tailStart}); without one it is `keepRaw` alone.
 */
function splitUnits(
  units: readonly DeltaUnit[],
  decision: { keepRaw: number; maxRaw: number },
  input: DigestInput,
  policy: DigestPolicy,
): { included: DeltaUnit[]; kept: DeltaUnit[] } {
  if (decision.maxRaw <= decision.keepRaw) return splitTail(units, decision.keepRaw);
  const steps: WorkStep[] = units.map((unit) => ({ tokens: unit.tokens, ...stepFiles(unit.messages, input.cwd) }));
  const limit = branchLookup(input.branch).indexOf(input.limitId);
  const cut = tailStart(steps, currentTouches(input.branch, limit, input.cwd), {
    keepRaw: decision.keepRaw,
    maxRaw: decision.maxRaw,
    hotSteps: policy.hotSteps ?? HOT_STEPS,
  });
  return { included: units.slice(0, cut), kept: units.slice(cut) };
}

/**
 * Whether `targets` may hold a startup read: one of them lies in the startup interval (after the first user message,
 * before the second). Startup reads are results inside that interval, so a digest covering none of it has none, and
 * the scan (which reads the whole branch) is left out. With a repeated id the interval is not told by id: scan.
 */
function coversStartup(branch: readonly SessionEntry[], targets: ReadonlySet<string>): boolean {
  const lookup = branchLookup(branch);
  if (!lookup.unique) return true;
  const [first, second] = lookup.firstUsers;
  if (first === undefined) return false;
  const end = second ?? branch.length;
  for (const id of targets) {
    const i = lookup.indexOf(id);
    if (i > first && i < end) return true;
  }
  return false;
}

/** The newest context edit of each target on a branch, kept per branch array as it grows (see {@link BranchFold}). */
const branchEdits = new BranchFold<Map<string, ContextEditEntry>>(
  () => new Map(),
  (edits, entry) => {
    if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  },
);

/**
 * Result entry ids of the startup reads among `targets` (reads named by the project instructions at task start):
 * `scanStartupReads` of the branch, filtered to `targets`, scanned only when the targets reach the startup interval,
 * and then only over the targets' entries. A session of one long task never closes the interval, and a digest comes
 * every batch: a scan of the whole interval each time made such a session quadratic.
 */
export function startupReadIds(input: DigestInput, targets: ReadonlySet<string>): Set<string> {
  if (!coversStartup(input.branch, targets)) return new Set();
  const lookup = branchLookup(input.branch);
  let from = input.branch.length;
  let to = 0;
  for (const id of targets) {
    const i = lookup.indexOf(id);
    if (i < 0) continue;
    from = Math.min(from, i);
    to = Math.max(to, i + 1);
  }
  const state = scanStartupReads(
    {
      branch: input.branch,
      cwd: input.cwd,
      contextFiles: input.contextFiles ?? [],
      systemPrompt: input.systemPrompt,
      edits: branchEdits.of(input.branch),
    },
    // With a repeated id, an id does not tell where its entry is: the whole interval is scanned, as before.
    lookup.unique ? { from, to } : undefined,
  );
  return new Set(state.reads.map((r) => r.entryId).filter((id) => targets.has(id)));
}

/** Everything a message puts in front of the model, as text (tool-call arguments as JSON). */
function messageText(message: AgentMessage): string {
  const m = message as unknown as Record<string, unknown>;
  const parts: string[] = [];
  const content = m.content;
  if (typeof content === "string") parts.push(content);
  else if (Array.isArray(content))
    for (const block of content as Record<string, unknown>[]) parts.push(blockText(block));
  for (const key of STRING_FIELDS) if (typeof m[key] === "string") parts.push(m[key] as string);
  return parts.join("\n");
}

/** Fields other than `content` whose text a message shows (bash executions, summaries). */
const STRING_FIELDS = ["command", "output", "summary"] as const;

/** What one content block shows, as text ("" for blocks that show none, such as images). */
function blockText(block: Record<string, unknown>): string {
  if (block?.type === "text") return String(block.text ?? "");
  if (block?.type === "thinking") return String(block.thinking ?? "");
  if (block?.type === "toolCall") return JSON.stringify(block.arguments ?? {});
  return "";
}

/**
 * Names per message or content block object, as indexes into one table of distinct names. Messages are immutable
 * session data and the same objects come back on every boundary, so a text is scanned once per process, not once per
 * digest (a memo: the result never depends on it). The same paths and identifiers recur in thousands of messages: one
 * copy of each, and a list of small integers per object, keep a long session's memo far below its text.
 */
let names = new NameTable();
/** Distinct names kept before the table starts over (see {@link nameTable}). */
const MAX_NAMES = 1_000_000;

/** The numbers of the names in `key`'s text (see {@link keyText}), each once, in order of first appearance. */
function nameIdsOf(key: object, message: AgentMessage, table: NameTable): Int32Array {
  let ids = table.memo.get(key);
  if (!ids) {
    ids = table.idsIn(keyText(key, message));
    table.memo.set(key, ids);
  }
  return ids;
}

/** True when a message has no text besides its content (no bash command, output or summary). */
function isPlain(m: Record<string, unknown>): boolean {
  for (const key of STRING_FIELDS) if (typeof m[key] === "string") return false;
  return true;
}

/**
 * Pushes onto `out` the objects a message's names are memoized on: exactly `namesIn(messageText(message))` is the
 * union of their names ({@link keyText}). Two kinds of message are fresh objects at every projection, so a memo per
 * message object would rescan them at every digest, which over a long session grows with everything kept in view so
 * far: a dialogue answer inside a digest's range, projected without its reasoning (a copy that shares its content
 * blocks with the stored message), and the message of a custom entry (a digest, a checkpoint), built from the entry
 * each time. The first are memoized per content block, which is exact because a name never spans two parts (the
 * newline that joins them is not a name character); the second per entry, when the message's one text is the
 * entry's own.
 */
function pushNameKeys(message: AgentMessage, source: SessionEntry, out: object[]): void {
  const m = message as unknown as Record<string, unknown>;
  const content = m.content;
  const plain = isPlain(m);
  if (Array.isArray(content) && plain) {
    for (const block of content as unknown[]) if (block !== null && typeof block === "object") out.push(block);
    return;
  }
  const own = source.type === "custom_message" && plain && typeof content === "string" && content === source.content;
  out.push(own ? source : message);
}

/** The text a memo key of `message` stands for: the whole message's, or one content block's. */
function keyText(key: object, message: AgentMessage): string {
  if (key === message || !Array.isArray((message as { content?: unknown }).content)) return messageText(message);
  return blockText(key as Record<string, unknown>);
}

/** The names table, started over (the memo with it) once it holds too many names, so a long-lived process stays bounded. */
function nameTable(): NameTable {
  if (names.list.length > MAX_NAMES) names = new NameTable();
  return names;
}

/** Distinct names the table holds now (tests check what a finished replay leaves behind). */
export function namesHeld(): number {
  return names.list.length;
}

/**
 * Start the names table over. A session's names are looked up only through its own objects, so once it is done (the
 * lab replays one session after another in one process) its names are dead weight until the table's bound.
 */
export function forgetNames(): void {
  names = new NameTable();
  forgetCanonicalNames();
}

/** Names and paths the view shows once the digest replaces `targets`: everything else stays in view. */
export function namesInView(view: readonly ProjectedEntry[], targets: ReadonlySet<string>): Set<string> {
  const table = nameTable();
  const shown = new Set<string>();
  const keys: object[] = [];
  for (const entry of view) {
    if (targets.has(entry.sourceEntry.id)) continue;
    for (const message of entry.messages) {
      keys.length = 0;
      pushNameKeys(message, entry.sourceEntry, keys);
      for (const key of keys) for (const id of nameIdsOf(key, message, table)) shown.add(table.list[id]);
    }
  }
  return shown;
}

/** One view entry as the census counted it: its messages, their memo keys in order, and the keys' names. */
interface CensusEntry {
  id: string;
  messages: readonly AgentMessage[];
  keys: object[];
  ids: Int32Array[];
}

/**
 * How many view entries show each name, for one branch's views as they follow each other. Between digests a view only
 * grows at its end, and a digest changes it from the first entry it covers: the entries up to the first one whose
 * memo keys differ are kept, and only the rest is counted again. Comparing keys costs a pointer per content block;
 * counting costs a step per name, and that only for the span digested and the entries after it.
 */
interface Census {
  table: NameTable;
  entries: CensusEntry[];
  /** Positions in `entries` per entry id, ascending: a digest's covered entries are found without a pass. */
  positions: Map<string, number[]>;
  counts: Int32Array;
}

/** Censuses per branch array (the lab's rows and the host's live ledger each keep theirs). */
const censuses = new WeakMap<readonly SessionEntry[], Census>();

/** Keys of one message, gathered here while a census compares or counts (reused: a census runs at every digest). */
const scratchKeys: object[] = [];

/** True when the census counted `projected` as it is: the same entry and the same memo keys in the same order. */
function sameKeys(counted: CensusEntry, projected: ProjectedEntry): boolean {
  if (counted.id !== projected.sourceEntry.id) return false;
  // The same message objects have the same keys (messages are immutable session data): most entries end here.
  const messages = projected.messages;
  if (messages.length === counted.messages.length) {
    let i = 0;
    while (i < messages.length && messages[i] === counted.messages[i]) i++;
    if (i === messages.length) {
      counted.messages = messages;
      return true;
    }
  }
  let k = 0;
  for (const message of messages) {
    scratchKeys.length = 0;
    pushNameKeys(message, projected.sourceEntry, scratchKeys);
    for (const key of scratchKeys) if (counted.keys[k++] !== key) return false;
  }
  if (k !== counted.keys.length) return false;
  counted.messages = messages;
  return true;
}

function censusOf(branch: readonly SessionEntry[], view: readonly ProjectedEntry[]): Census {
  const table = nameTable();
  let census = censuses.get(branch);
  if (!census || census.table !== table) {
    census = { table, entries: [], positions: new Map(), counts: new Int32Array(1024) };
    censuses.set(branch, census);
  }
  const { entries } = census;
  let kept = 0;
  while (kept < entries.length && kept < view.length && sameKeys(entries[kept], view[kept])) kept++;
  for (let k = entries.length - 1; k >= kept; k--) {
    for (const ids of entries[k].ids) for (const id of ids) census.counts[id]--;
    // Positions were pushed in ascending order, so the one removed is the last of its id's list.
    const at = census.positions.get(entries[k].id)!;
    at.pop();
    if (!at.length) census.positions.delete(entries[k].id);
  }
  entries.length = kept;
  for (let k = kept; k < view.length; k++) {
    const projected = view[k];
    const counted: CensusEntry = { id: projected.sourceEntry.id, messages: projected.messages, keys: [], ids: [] };
    for (const message of projected.messages) {
      scratchKeys.length = 0;
      pushNameKeys(message, projected.sourceEntry, scratchKeys);
      for (const key of scratchKeys) {
        counted.keys.push(key);
        counted.ids.push(nameIdsOf(key, message, table));
      }
    }
    if (table.list.length > census.counts.length) {
      const counts = new Int32Array(Math.max(table.list.length, 2 * census.counts.length));
      counts.set(census.counts);
      census.counts = counts;
    }
    for (const ids of counted.ids) for (const id of ids) census.counts[id]++;
    const at = census.positions.get(counted.id);
    if (at) at.push(k);
    else census.positions.set(counted.id, [k]);
    entries.push(counted);
  }
  return census;
}

/**
 * {@link namesInView} for the view of `branch`, counted incrementally across a branch's digests ({@link Census}):
 * the same answers, as a set that is asked and added to. What rendering adds is kept apart.
 */
export function viewNames(
  branch: readonly SessionEntry[],
  view: readonly ProjectedEntry[],
  targets: ReadonlySet<string>,
): NameSet {
  const census = censusOf(branch, view);
  const { table, counts } = census;
  // The covered entries' names leave the view with them.
  const covered = new Map<number, number>();
  for (const target of targets)
    for (const k of census.positions.get(target) ?? [])
      for (const ids of census.entries[k].ids) for (const id of ids) covered.set(id, (covered.get(id) ?? 0) + 1);
  const added = new Set<string>();
  return {
    has(name: string): boolean {
      if (added.has(name)) return true;
      const id = table.idOf(name);
      return id !== undefined && counts[id] - (covered.get(id) ?? 0) > 0;
    },
    add(name: string) {
      added.add(name);
    },
  };
}

/** True when an earlier digest is on the branch with no compaction after it, so it is still in view. */
function formatExplained(branch: readonly SessionEntry[]): boolean {
  for (let i = branch.length - 1; i >= 0; i--) {
    if (branch[i].type === "compaction") return false;
    if (isDigestEntry(branch[i])) return true;
  }
  return false;
}

/**
 * Decide and, when due, write the digest. Returns `ok: false` with the reason when nothing is due (below the batch,
 * nothing raw, the boundary not on the branch); the caller then does nothing.
 */
export function planDigest(input: DigestInput): DigestOutcome {
  // One projection of the branch serves the selection and the names already in view.
  const view = input.view ?? projectBranch(input.branch, LEDGER_FACTS).entries;
  const delta = selectDelta(input.branch, input.limitId, view);
  if (!delta) return { ok: false, reason: "the boundary is not on the branch" };
  if (!delta.units.length) return { ok: false, reason: "nothing to digest" };
  const policy = input.policy ?? digestPolicy(input.contextWindow);
  const decision = input.force
    ? ({ act: true, why: input.force, keepRaw: 0, maxRaw: 0 } as const)
    : decideDigest({ rawTokens: delta.tokens, usageTokens: input.usageTokens, policy });
  if (!decision.act) return { ok: false, reason: decision.why };
  const { included, kept } = splitUnits(delta.units, decision, input, policy);
  const sum = (units: readonly DeltaUnit[]) => units.reduce((n, u) => n + u.tokens, 0);
  const hidden = sum(included);
  if (!included.length) return { ok: false, reason: "every raw step is within the kept tail" };
  // The tail is kept in whole steps, so it can hold more than `keepRaw`: the batch counts what is actually covered.
  // Short of a batch: asked again at the next step, which may move a whole step out of the kept tail.
  if (decision.why === "batch" && hidden < policy.batch) return { ok: false, reason: "below batch" };

  const targets = new Set(included.flatMap((u) => u.entryIds));
  const superseded = findSuperseded(
    input.branch,
    input.branch.length - 1,
    targets,
    input.cwd,
    policy.written !== undefined,
  );
  const startupReads = startupReadIds(input, targets);
  const { text, stats } = renderDigest(included, {
    checkpoint: delta.checkpoint,
    explained: formatExplained(input.branch),
    cwd: input.cwd,
    superseded,
    startupReads,
    shown: viewNames(input.branch, view, targets),
    written: policy.written,
  });
  const tokens = estimateTextTokens(text);
  // A digest that saves nothing would only break the cache; a forced one is still written (the user or the window asked).
  if (!input.force && tokens >= hidden) return { ok: false, reason: NOT_SMALLER };
  const throughId = included[included.length - 1].entryIds[included[included.length - 1].entryIds.length - 1];
  return {
    ok: true,
    draft: {
      type: "custom_message",
      customType: LedgerType.digest,
      content: text,
      display: true,
      details: {
        v: 1,
        strategy: "digest",
        checkpoint: delta.checkpoint,
        range: { afterId: delta.afterId, throughId, keepDialogue: true },
        userOrdinals: ordinalsOf(included),
        trigger: decision.why,
        tokens: { contextBefore: input.usageTokens, hidden, keptRaw: sum(kept), digest: tokens },
        steps: stats,
      },
    },
  };
}

/**
 * Estimated tokens of an entry's messages, per entry object. Ledger entries never change once written, and the bounds
 * below count the same raw tail again at every step boundary until a digest covers it: counted once, the check costs
 * a lookup per entry instead of a serialization of its tool calls.
 */
const entryTokenMemo = new WeakMap<SessionEntry, number>();

function entryTokens(entry: SessionEntry): number {
  let tokens = entryTokenMemo.get(entry);
  if (tokens === undefined) {
    tokens = estimateMessagesTokens(entryMessages(entry));
    entryTokenMemo.set(entry, tokens);
  }
  return tokens;
}

/** sums[i]: tokens of the technical entries among 0..i (foldable, not dialogue), per branch array. */
const rawSums = new BranchFold<number[]>(
  () => [],
  (sums, entry, i) => {
    const technical = isFoldable(entry) && !isDialogue(entry, LEDGER_FACTS);
    sums.push((i > 0 ? sums[i - 1] : 0) + (technical ? entryTokens(entry) : 0));
  },
);

/**
 * Where the raw tail a digest could cover starts, as the index of the entry before it: the last tool checkpoint's range
 * end at or before `limit` (`limit` itself at most the leaf), or -1 when the range ends later, off the branch, or there
 * is no checkpoint; but never before the view's start ({@link viewFloor}). The steps a compaction left behind are not
 * shown, so no digest covers them: counted, they kept the bound above a batch for good after a compaction, and the
 * digest looked due at every boundary of a long session.
 */
function rawTailStart(branch: readonly SessionEntry[], limit: number): number {
  const lookup = branchLookup(branch);
  const last = Math.min(limit, branch.length - 1);
  return Math.max(checkpointEnd(branch, lookup, last), Math.min(viewFloor(branch, lookup), last + 1) - 1);
}

/** Index of the last tool checkpoint's range end at or before `last`, or -1. */
function checkpointEnd(branch: readonly SessionEntry[], lookup: BranchLookup, last: number): number {
  const throughId =
    lookup.lastCheckpoint < 0
      ? undefined
      : (branch[lookup.lastCheckpoint] as CustomMessageEntry<RangeDetails>).details!.range.throughId;
  if (throughId === undefined) return -1;
  if (lookup.unique) {
    const i = lookup.indexOf(throughId);
    return i <= last ? i : -1;
  }
  // A repeated id: the nearest entry of that id at or before `last`.
  let i = last;
  while (i >= 0 && branch[i].id !== throughId) i--;
  return i;
}

/**
 * A cheap upper bound of the raw technical tokens a digest could cover now: the technical entries after the last
 * tool checkpoint's range, up to `limit`, counted without projecting the branch (folds, edits and compactions are
 * ignored, so it never undercounts). Lets a caller skip the exact selection on the many boundaries where nothing is
 * due. Running sums kept per branch array make it a subtraction, whatever the length of the raw tail.
 */
export function rawTokensBound(branch: readonly SessionEntry[], limit: number): number {
  const last = Math.min(limit, branch.length - 1);
  if (last < 0) return 0;
  const sums = rawSums.of(branch);
  const start = rawTailStart(branch, limit);
  return sums[last] - (start >= 0 ? sums[start] : 0);
}

/** What a step boundary (Pi's turn_end) shows the digest decision. */
export interface DigestBoundary {
  /** Active branch, root to leaf, with the step just ended. */
  branch: readonly SessionEntry[];
  /** The step's assistant message entry: a digest covers only what is older. */
  stepEntryId: string;
  /** customTypes of the drafts earlier handlers already return for this boundary. */
  drafts: readonly (string | undefined)[];
  /** Context usage after the step (null when unknown). */
  usageTokens: number | null;
  policy: DigestPolicy;
  /** Index of an entry on `branch` (the host passes its live index; default: the lookup kept per branch array). */
  indexOf?: (id: string) => number;
  /** Session working directory, to compare file paths of the working set ("" compares them as written). */
  cwd?: string;
  /** The caller's last declined attempt (see {@link DigestAttempt}). */
  lastAttempt?: DigestAttempt;
}

/**
 * The tail a digest would cover at a boundary: where it starts and ends, every token in it (dialogue and reasoning
 * included, so that any growth of what a digest could cover shows), why a digest looked due, and the batch then.
 */
export interface RawTail {
  /** The entry the tail follows (the newest tool checkpoint's end), null when the tail starts the branch. */
  afterId: string | null;
  /** The tail's last entry (the entry before the step). */
  limitId: string;
  tokens: number;
  why: "batch" | "window";
  batch: number;
}

/**
 * A digest declined as not smaller than its steps, and how large the same tail must grow before it is looked for
 * again. The caller keeps the last one and hands it to the next {@link digestDue}. Selecting and rendering a digest
 * reads the whole tail: asking again at every boundary, over a tail that does not digest well (many tiny tool steps,
 * whose digest lines say as much as the steps), made the host's turn_end and the lab quadratic.
 */
export interface DigestAttempt {
  tail: RawTail;
  retryAt: number;
}

/**
 * A digest not smaller than its steps is looked for again once its tail has grown by a quarter (and at least a
 * batch): the attempts over one tail then form a geometric series, linear work in all. Only that much more can make
 * such a tail digest well; a digest that would have been a little smaller sooner is the one this gives up.
 */
const RETRY_GROWTH = 1.25;

/**
 * The attempt a caller keeps after planning over `tail` ended with `reason` (a declined {@link DigestOutcome}'s, or the
 * chart's): a new one for a digest not smaller than its steps, else the one it had.
 */
export function keptAttempt(
  tail: RawTail,
  reason: string | undefined,
  previous: DigestAttempt | undefined,
): DigestAttempt | undefined {
  if (reason !== NOT_SMALLER) return previous;
  return { tail, retryAt: tail.tokens + Math.max(tail.batch, Math.ceil(tail.tokens * (RETRY_GROWTH - 1))) };
}

/** sums[i]: tokens of every foldable entry among 0..i, per branch array (what {@link RawTail} counts). */
const allSums = new BranchFold<number[]>(
  () => [],
  (sums, entry, i) => {
    sums.push((i > 0 ? sums[i - 1] : 0) + (isFoldable(entry) ? entryTokens(entry) : 0));
  },
);

/**
 * Whether `last` still holds at this boundary: the same tail start, reason and batch, its tail's end still on this
 * branch at or before `limit` (a `/tree` move elsewhere makes it another tail), and less growth than it waits for.
 */
function stillDeclined(
  last: DigestAttempt | undefined,
  tail: RawTail,
  limit: number,
  indexOf: (id: string) => number,
): boolean {
  if (!last || last.tail.afterId !== tail.afterId || last.tail.why !== tail.why || last.tail.batch !== tail.batch)
    return false;
  const end = indexOf(last.tail.limitId);
  return end >= 0 && end <= limit && tail.tokens < last.retryAt;
}

export type DigestDue =
  | { due: true; limitId: string; tail: RawTail }
  | { due: false; why: "range fact here" | "no boundary" | "below batch" | "nothing to digest" | "tried" };

/**
 * Whether a digest may be due at a step boundary: the one check the host's turn_end hook and the lab's digest row
 * make before {@link planDigest} selects and renders. A cheap bound settles most boundaries, which are far from a batch.
 */
export function digestDue(boundary: DigestBoundary): DigestDue {
  const { branch, drafts, usageTokens, policy } = boundary;
  // One range fact per boundary: a fold or checkpoint committed here already changed what the model sees.
  if (drafts.some((t) => LEDGER_FACTS.declaresRange(t))) return { due: false, why: "range fact here" };
  // With the host's live index, or the lookup kept per branch array, the boundary is found without a scan: the check
  // grows with the raw tail, not the session.
  const indexOf = boundary.indexOf ?? branchLookup(branch).indexOf;
  const step = indexOf(boundary.stepEntryId);
  if (step <= 0) return { due: false, why: "no boundary" };
  const limit = step - 1;
  const limitId = branch[limit].id;
  const rawTokens = rawTokensBound(branch, limit);
  const decision = decideDigest({ rawTokens, usageTokens, policy });
  if (!decision.act) return { due: false, why: decision.why };
  const start = rawTailStart(branch, limit);
  const sums = allSums.of(branch);
  const tail: RawTail = {
    afterId: start >= 0 ? branch[start].id : null,
    limitId,
    tokens: sums[limit] - (start >= 0 ? sums[start] : 0),
    why: decision.why,
    batch: policy.batch,
  };
  if (stillDeclined(boundary.lastAttempt, tail, limit, indexOf)) return { due: false, why: "tried" };
  if (decision.maxRaw > decision.keepRaw) {
    // The working set may hold the tail longer than `keepRaw`: due only when what lies before it still makes a batch.
    const steps = rawStepsBound(branch, limit, boundary.cwd ?? "");
    const cut = tailStart(steps, currentTouches(branch, limit, boundary.cwd ?? ""), {
      keepRaw: decision.keepRaw,
      maxRaw: decision.maxRaw,
      hotSteps: policy.hotSteps ?? HOT_STEPS,
    });
    let hidden = 0;
    for (let k = 0; k < cut; k++) hidden += steps[k].tokens;
    if (hidden < (decision.why === "batch" ? policy.batch : policy.minFull)) return { due: false, why: "below batch" };
  }
  return { due: true, limitId, tail };
}

/**
 * The raw steps after the last tool checkpoint's range, up to `limit`, as {@link rawTokensBound} counts them (folds,
 * edits and compactions ignored), one per assistant turn with its results: what the working-set split looks at
 * before the exact selection is made. Each step is read once ({@link rawStep}): the same raw tail is split again at
 * every boundary until a digest covers it.
 */
export function rawStepsBound(branch: readonly SessionEntry[], limit: number, cwd: string): WorkStep[] {
  const start = rawTailStart(branch, limit);
  const steps: WorkStep[] = [];
  let first = -1;
  for (let i = start + 1; i <= Math.min(limit, branch.length - 1); i++) {
    const entry = branch[i];
    if (!isFoldable(entry) || isDialogue(entry, LEDGER_FACTS)) continue;
    const assistant = entry.type === "message" && entry.message.role === "assistant";
    if (assistant || first < 0) {
      if (first >= 0) steps.push(rawStep(branch, first, i, cwd));
      first = i;
    }
  }
  if (first >= 0) steps.push(rawStep(branch, first, Math.min(limit, branch.length - 1) + 1, cwd));
  return steps;
}

/** One raw step as last read: the technical entries it was read from (in order), the directory, and the step. */
interface RawStepMemo {
  entries: readonly SessionEntry[];
  cwd: string;
  step: WorkStep;
}

/** Raw steps per first entry. Held weakly by the entry, so a session's steps go with it. */
const rawStepMemo = new WeakMap<SessionEntry, RawStepMemo>();

/**
 * The step made of the technical entries of `branch[from, to)`, `branch[from]` the first of them: its tokens and
 * files. Remembered per first entry with the entries it was read from, and reused only when the same entry objects
 * follow in the same order (entries never change once written), so it is exact on any array, live or copied.
 */
function rawStep(branch: readonly SessionEntry[], from: number, to: number, cwd: string): WorkStep {
  const memo = rawStepMemo.get(branch[from]);
  if (memo && memo.cwd === cwd) {
    let k = 0;
    let same = true;
    for (let i = from; i < to && same; i++) {
      const entry = branch[i];
      if (!isFoldable(entry) || isDialogue(entry, LEDGER_FACTS)) continue;
      same = memo.entries[k++] === entry;
    }
    if (same && k === memo.entries.length) return memo.step;
  }
  const entries: SessionEntry[] = [];
  const messages: AgentMessage[] = [];
  let tokens = 0;
  for (let i = from; i < to; i++) {
    const entry = branch[i];
    if (!isFoldable(entry) || isDialogue(entry, LEDGER_FACTS)) continue;
    entries.push(entry);
    tokens += entryTokens(entry);
    messages.push(...entryMessages(entry));
  }
  const step: WorkStep = { tokens, ...stepFiles(messages, cwd) };
  rawStepMemo.set(branch[from], { entries, cwd, step });
  return step;
}
