// Target and checkpoint-name rules of the fold strategy: what `context_compact` may fold after, and what
// `context_checkpoint` may be called. Pure: decisions over a read-only view of the branch; no I/O.
import { BIDI_CONTROL, quoted } from "../../log/display.ts";
import type { SessionEntry } from "../../log/entries.ts";
import { reduceBranch, type LedgerState } from "../../projection/ledger-state.ts";
import { viewCut, type ViewCut } from "../../projection/project.ts";
import { LEDGER_FACTS } from "../catalog.ts";

/** What the rules need to know about the session. */
export interface FoldView {
  path: readonly SessionEntry[];
  indexOf(id: string): number;
  /** True when a range on the path hides the entry. */
  isHidden(id: string): boolean;
  /** Labels on the active path (entry id -> label). */
  labels: Readonly<Record<string, string>>;
  /** Any entry in the session file, on or off the active path. */
  exists(id: string): boolean;
  /** Entry ids carrying `label` on other branches, newest first. */
  labelledElsewhere(label: string): readonly string[];
  /** The restore that revoked the act with this id, if one did (folds, checkpoints, compactions). */
  revokedBy?(id: string): string | undefined;
  /** True when a pin keeps the entry in the model view whatever any act hides. */
  isPinned?(id: string): boolean;
  /** The ledger state at the leaf, when the caller keeps it (else folded from `path`). */
  state?: LedgerState;
}

/** What the cut rules read: the path, and positions and the ledger state when the caller has them. */
type CutView = Pick<FoldView, "path"> & Partial<Pick<FoldView, "indexOf" | "state">>;

/** The model view's cut over the fold view's path (see `viewCut`): restores and checkpoint markers included. */
function cutOf(view: CutView): ViewCut {
  const indexOf = view.indexOf ?? ((id: string) => view.path.findIndex((e) => e.id === id));
  return viewCut(view.state ?? reduceBranch(view.path, LEDGER_FACTS), indexOf);
}

/** Index on the path of the compaction heading the context (the newest not revoked), or -1. */
export function latestCompactionIndex(view: CutView): number {
  return cutOf(view).head;
}

/** Index on the path of the first entry the view's cut keeps; earlier entries are outside the context. */
export function contextStartIndex(view: CutView): number {
  const cut = cutOf(view);
  return cut.head < 0 ? 0 : cut.from;
}

/**
 * Path indices in context order: entries the latest compaction left out (oldest first), then the compaction
 * itself, whose summary leads the context, then its kept tail and everything after it. Without a compaction
 * this is path order.
 */
export function contextOrder(view: CutView): number[] {
  const cut = cutOf(view);
  const compaction = cut.head;
  const start = cut.head < 0 ? 0 : cut.from;
  const order: number[] = [];
  for (let i = 0; i < start; i++) order.push(i);
  if (compaction >= 0 && compaction >= start) order.push(compaction);
  for (let i = start; i < view.path.length; i++) if (i !== compaction) order.push(i);
  return order;
}

/** The single wording for both kinds of unusable target: the remedy is the same. */
export const ALREADY_COMPACTED = "inside history that was already compacted";

export type TargetResolution = { ok: true; afterId: string | null; label?: string } | { ok: false; error: string };

/** Resolve a label first (newest on the path, then elsewhere), then an entry id. */
export function resolveTarget(
  target: string,
  view: FoldView,
): { id: string | null; label?: string } | { error: string } {
  const name = target.trim();
  if (!name) return { error: "target is empty; pass a label, an entry id from context_timeline, or root" };
  if (name === "root") return { id: null };
  let newest = -1;
  for (const [id, label] of Object.entries(view.labels)) {
    if (label === name) newest = Math.max(newest, view.indexOf(id));
  }
  if (newest >= 0) return { id: view.path[newest].id, label: name };
  const elsewhere = view.labelledElsewhere(name);
  if (elsewhere.length) return { id: elsewhere[0], label: name };
  return { id: name };
}

/**
 * Validate a fold target against the requesting message (an entry id on the path). The target must exist, be on
 * the active path strictly before the request, and still be in the model's context.
 */
export function validateTarget(target: string, requestEntryId: string, view: FoldView): TargetResolution {
  const resolved = resolveTarget(target, view);
  if ("error" in resolved) return { ok: false, error: resolved.error };
  if (resolved.id === null) return { ok: true, afterId: null };
  const id = resolved.id;
  const shown = `target ${quoted(target)}`;
  if (!view.exists(id))
    return {
      ok: false,
      error: `${shown} was not found. Use a label or an entry id listed by context_timeline, or root.`,
    };
  const at = view.indexOf(id);
  if (at < 0) return { ok: false, error: `${shown} is not on the current branch.` };
  const request = view.indexOf(requestEntryId);
  if (request >= 0 && at >= request)
    return { ok: false, error: `${shown} must come before the message that asks to compact.` };
  if (view.isHidden(id) || at < contextStartIndex(view))
    return { ok: false, error: `${shown} is ${ALREADY_COMPACTED}. Pick a later label or entry, or root.` };
  // The latest compaction's summary leads the context, ahead of the kept tail that precedes it on the path.
  // Folding after it in context order is folding from the start of the context: the summary itself stays.
  if (at === latestCompactionIndex(view))
    return { ok: true, afterId: null, ...(resolved.label ? { label: resolved.label } : {}) };
  return { ok: true, afterId: id, ...(resolved.label ? { label: resolved.label } : {}) };
}

/** Name rules shared by `context_checkpoint` and `backupCheckpoint`. Returns an error message or undefined. */
/** Longest label accepted: a name is a handle, shown on one timeline line. */
export const MAX_NAME_CHARS = 100;
/** C0 and C1 controls (newline, escape, NUL, …) and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

export function checkName(
  name: string,
  view: FoldView,
  pendingNames: ReadonlySet<string> = new Set(),
): string | undefined {
  const trimmed = name.trim();
  if (!trimmed) return "label must not be empty";
  if (name.length > MAX_NAME_CHARS) return `label must be at most ${MAX_NAME_CHARS} characters (got ${name.length})`;
  // A newline would forge a line in context_timeline; escapes and NUL would reach terminals and logs.
  if (CONTROL.test(name))
    return `label must not contain control characters (newlines, tabs, escapes, NUL): ${quoted(name)}`;
  // A bidi control reorders what is displayed around it, so a label could pose as other text in /tree and the timeline.
  if (BIDI_CONTROL.test(name))
    return `label must not contain bidirectional controls (such as U+202E, right-to-left override): ${quoted(name)}`;
  if (trimmed !== name) return "label must not start or end with whitespace";
  if (name === "root") return `"root" is reserved for the start of the context`;
  if (view.exists(name)) return `"${name}" is already an entry id; choose another label`;
  if (Object.values(view.labels).includes(name) || view.labelledElsewhere(name).length || pendingNames.has(name))
    return `a label "${name}" already exists`;
  return undefined;
}

/** Last assistant entry at or before `index` (its tool results must stay visible next to it). */
export function assistantAtOrBefore(view: Pick<FoldView, "path">, index: number): SessionEntry | undefined {
  for (let i = index; i >= 0; i--) {
    const entry = view.path[i];
    if (entry.type === "message" && entry.message.role === "assistant") return entry;
    if (entry.type === "message" && entry.message.role === "user") return undefined;
  }
  return undefined;
}
