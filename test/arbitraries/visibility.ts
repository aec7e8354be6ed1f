// A deliberately naive model of what the model can currently see, used by the generator to pick legal fold
// targets and restore targets. It is independent of src/projection (sets and linear scans, no incremental
// structures), so a generator bug and a projection bug are unlikely to cancel out.
import { buildContextEntries, type SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RangeDetails, RestoreData } from "../../src/log/entries.ts";
import { isCheckpointMarker, LedgerType } from "../../src/strategies/catalog.ts";

/** Entries a fold rule may hide: conversation messages and custom messages. */
export function isFoldableEntry(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return true;
  if (entry.type !== "message") return false;
  const role = entry.message.role;
  return role === "user" || role === "assistant" || role === "toolResult";
}

/** The range of a fold, or of a preserve or digest tool checkpoint (a keepDialogue range). */
function foldDetails(entry: SessionEntry): RangeDetails | undefined {
  if (entry.type !== "custom_message") return undefined;
  if (
    entry.customType !== LedgerType.fold &&
    entry.customType !== LedgerType.preserve &&
    entry.customType !== LedgerType.digest
  )
    return undefined;
  return entry.details as RangeDetails;
}

/** What a keepDialogue range leaves visible: user messages, finished answers with text, and tool checkpoints. */
function isNaiveDialogue(entry: SessionEntry): boolean {
  if (entry.type === "custom_message")
    return entry.customType === LedgerType.preserve || entry.customType === LedgerType.digest;
  if (entry.type !== "message") return false;
  const m = entry.message;
  if (m.role === "user") return true;
  if (m.role !== "assistant" || m.stopReason !== "stop") return false;
  return !m.content.some((b) => b.type === "toolCall") && m.content.some((b) => b.type !== "thinking");
}

/** What the restore facts on a path say, replayed in order: revoked acts, narrowed fold ends, moved compaction cuts. */
export interface NaiveRestores {
  revoked: Set<string>;
  throughOf: Map<string, string>;
  keptFromOf: Map<string, string>;
}

export function naiveRestores(path: readonly SessionEntry[]): NaiveRestores {
  const out: NaiveRestores = { revoked: new Set(), throughOf: new Map(), keptFromOf: new Map() };
  const seen = new Set<string>();
  for (const entry of path) {
    seen.add(entry.id);
    if (entry.type !== "custom" || entry.customType !== LedgerType.restore) continue;
    const data = entry.data as RestoreData;
    // Only an act earlier on this path, and not yet revoked, can be restored.
    if (!seen.has(data.targetId) || out.revoked.has(data.targetId)) continue;
    if (data.throughId !== undefined) out.throughOf.set(data.targetId, data.throughId);
    else if (data.firstKeptEntryId !== undefined) out.keptFromOf.set(data.targetId, data.firstKeptEntryId);
    else out.revoked.add(data.targetId);
  }
  return out;
}

/**
 * The id of the entry the model view starts from: the newest real (not marker) compaction no restore revoked keeps
 * from its kept entry (or a partial restore's), or from itself when that entry is not before it; the root without one.
 */
export function naiveViewStart(path: readonly SessionEntry[], restores: NaiveRestores = naiveRestores(path)): string {
  const real = path.filter((e) => e.type === "compaction" && !isCheckpointMarker(e) && !restores.revoked.has(e.id));
  const cut = real[real.length - 1];
  if (cut?.type !== "compaction") return path[0].id;
  const from = restores.keptFromOf.get(cut.id) ?? cut.firstKeptEntryId;
  const start = path.findIndex((e) => e.id === from);
  return start >= 0 && start < path.indexOf(cut) ? from : cut.id;
}

/**
 * Entries in the model's context before folds, compaction-aware like Pi, except that the cut followed is the newest
 * compaction no restore revoked (starting where a partial restore moved it), and a preserve marker heading the
 * context keeps from where the view started before it. Revoked acts' own messages are left out.
 */
export function naiveContext(
  path: readonly SessionEntry[],
  restores: NaiveRestores = naiveRestores(path),
): SessionEntry[] {
  const compactions = path.filter((e) => e.type === "compaction" && !restores.revoked.has(e.id));
  const cut = compactions[compactions.length - 1];
  let selected: SessionEntry[];
  if (cut?.type !== "compaction") selected = path.slice();
  else {
    const at = path.indexOf(cut);
    const from = isCheckpointMarker(cut)
      ? naiveViewStart(path, restores)
      : (restores.keptFromOf.get(cut.id) ?? cut.firstKeptEntryId);
    const start = path.findIndex((e) => e.id === from);
    const kept =
      start >= 0 && start < at
        ? path.slice(start, at).filter((e) => !(e.type === "message" && e.message.role === "system"))
        : [];
    selected = [cut, ...kept, ...path.slice(at + 1)];
  }
  return selected.filter((e) => !restores.revoked.has(e.id) && !isRevokedRecap(e, restores));
}

function isRevokedRecap(entry: SessionEntry, restores: NaiveRestores): boolean {
  if (entry.type !== "custom_message" || entry.customType !== LedgerType.recap) return false;
  return restores.revoked.has(String((entry.details as { compactionId?: unknown } | undefined)?.compactionId));
}

function toolCallIds(entry: SessionEntry | undefined): Set<string> {
  const ids = new Set<string>();
  if (entry?.type === "message" && entry.message.role === "assistant") {
    for (const block of entry.message.content) if (block.type === "toolCall") ids.add(block.id);
  }
  return ids;
}

/** The naive `<keepContext>` rule: a line of the user's own text that is only the tag, or one whole tagged span. */
function naiveKeeps(entry: SessionEntry): boolean {
  if (entry.type !== "message" || entry.message.role !== "user") return false;
  const content = entry.message.content;
  const text =
    typeof content === "string" ? content : content.map((b) => (b.type === "text" ? `${b.text}\n` : "")).join("");
  return text.split("\n").some((line) => {
    const t = line.trim();
    return t === "<keepContext>" || (t.startsWith("<keepContext>") && t.endsWith("</keepContext>") && t.length >= 27);
  });
}

/** Pin state per target id, oldest fact first: the newest pin fact decides; a `<keepContext>` user message pins itself. */
export function naivePins(path: readonly SessionEntry[]): Map<string, boolean> {
  const pins = new Map<string, boolean>();
  for (const e of path) {
    if (e.type === "custom" && e.customType === LedgerType.pin) {
      const d = e.data as { v?: unknown; targetId?: unknown; pinned?: unknown };
      if (d?.v === 1 && typeof d.targetId === "string" && typeof d.pinned === "boolean") {
        pins.delete(d.targetId);
        pins.set(d.targetId, d.pinned);
      }
    } else if (naiveKeeps(e) && pins.get(e.id) !== true) {
      pins.delete(e.id);
      pins.set(e.id, true);
    }
  }
  return pins;
}

/**
 * Ids of pinned entries on `path`: each pinned conversation or custom message, and for a tool exchange the assistant
 * message with every result of its calls (up to the next user or assistant message).
 */
export function naivePinnedIds(path: readonly SessionEntry[]): Set<string> {
  const out = new Set<string>();
  const isMessage = (e: SessionEntry | undefined, role: string) => e?.type === "message" && e.message.role === role;
  for (const [id, pinned] of naivePins(path)) {
    const at = path.findIndex((e) => e.id === id);
    const entry = path[at];
    if (
      !pinned ||
      !entry ||
      !(entry.type === "custom_message" || (entry.type === "message" && entry.message.role !== "system"))
    )
      continue;
    out.add(id);
    let call = at;
    if (isMessage(entry, "toolResult")) {
      const prior = path.slice(0, at).findLastIndex((e) => isMessage(e, "assistant"));
      call =
        prior >= 0 && toolCallIds(path[prior]).has((entry as { message: { toolCallId: string } }).message.toolCallId)
          ? prior
          : -1;
    }
    if (call < 0) continue;
    const calls = toolCallIds(path[call]);
    if (!calls.size) continue;
    out.add(path[call].id);
    for (let i = call + 1; i < path.length && !isMessage(path[i], "user") && !isMessage(path[i], "assistant"); i++) {
      const e = path[i];
      if (e.type === "message" && e.message.role === "toolResult" && calls.has(e.message.toolCallId)) out.add(e.id);
    }
  }
  return out;
}

/**
 * Ids on `path` that fold rules on `path` hide (pinned entries never). Each rule hides foldable entries strictly after `afterId`
 * (or from the start) through `throughId`, except tool results answering `keepToolResultsOf`'s calls, and, for a
 * tool checkpoint's keepDialogue range, the dialogue.
 */
export function naiveHiddenIds(path: readonly SessionEntry[]): Set<string> {
  const hidden = new Set<string>();
  const ids = path.map((entry) => entry.id);
  const restores = naiveRestores(path);
  const pinned = naivePinnedIds(path);
  for (const entry of path) {
    const details = foldDetails(entry);
    if (!details) continue;
    // A revoked fold hides only its own message; a partly restored one hides up to its narrowed end.
    if (restores.revoked.has(entry.id)) {
      hidden.add(entry.id);
      continue;
    }
    const { afterId, keepToolResultsOf } = details.range;
    const throughId = restores.throughOf.get(entry.id) ?? details.range.throughId;
    const start = afterId === null ? 0 : ids.indexOf(afterId) + 1;
    const end = ids.indexOf(throughId);
    if ((afterId !== null && start === 0) || end < 0) continue;
    const kept = toolCallIds(path.find((e) => e.id === keepToolResultsOf));
    for (let i = start; i <= end; i++) {
      const candidate = path[i];
      if (!isFoldableEntry(candidate)) continue;
      if (details.range.keepDialogue && isNaiveDialogue(candidate)) continue;
      if (
        candidate.type === "message" &&
        candidate.message.role === "toolResult" &&
        kept.has(candidate.message.toolCallId)
      )
        continue;
      if (pinned.has(candidate.id)) continue;
      hidden.add(candidate.id);
    }
  }
  return hidden;
}

/**
 * Entries that are legal fold targets at the end of `path`: foldable, in Pi's compaction-aware context,
 * not omitted by a context edit and not hidden by an earlier fold. Returned in path order.
 */
export function visibleFoldTargets(path: readonly SessionEntry[]): SessionEntry[] {
  if (path.length === 0) return [];
  const restores = naiveRestores(path);
  // Without restores and markers this is Pi's own selection; the naive model must agree with it then.
  const own = restores.revoked.size || restores.keptFromOf.size || path.some(isCheckpointMarker);
  const context = new Set(
    (own ? naiveContext(path, restores) : buildContextEntries(path.slice(), path[path.length - 1].id)).map(
      (entry) => entry.id,
    ),
  );
  const omitted = new Map<string, boolean>();
  for (const entry of path) {
    if (entry.type === "context_edit" && context.has(entry.id)) omitted.set(entry.targetId, entry.replacement === null);
  }
  const hidden = naiveHiddenIds(path);
  return path.filter(
    (entry) =>
      context.has(entry.id) && isFoldableEntry(entry) && !hidden.has(entry.id) && omitted.get(entry.id) !== true,
  );
}

/** Acts on the path a restore may still target: fold and tool checkpoint messages and compactions not revoked yet, oldest first (a marker is no act). */
export function restorableActs(path: readonly SessionEntry[]): SessionEntry[] {
  const { revoked } = naiveRestores(path);
  return path.filter(
    (e) => !revoked.has(e.id) && ((e.type === "compaction" && !isCheckpointMarker(e)) || foldDetails(e) !== undefined),
  );
}
