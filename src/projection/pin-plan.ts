// Pins, the decisions behind the tools and commands: how a target names an entry, what a pin holds and costs, whether
// it fits the pin budget, which facts an unpin writes, and the listing. Pure: the branch, its state, token figures
// and the budget come in; no clocks, no I/O.
import { CoreRecord, type PinData, type SessionEntry } from "../log/entries.ts";
import { quoted } from "../log/display.ts";
import { activePins, type LedgerState } from "./ledger-state.ts";
import { isPinnable, pinGroup, PinSet, type PinFact, type PinLookup } from "./pins.ts";

/** What pin decisions read: the path with its positions, the ledger state, and each entry's tokens in the view. */
export interface PinContext extends PinLookup {
  path: readonly SessionEntry[];
  state: LedgerState;
  /** Estimated tokens the entry at a path index sends. */
  tokensAt(index: number): number;
}

export type PinTarget = { ok: true; id: string } | { ok: false; error: string };

/** Longest note a pin keeps (a note is for people and is never sent to the model). */
export const MAX_NOTE_CHARS = 500;

const shown = (target: string) => quoted(target.length > 60 ? `${target.slice(0, 60)}…` : target);

function describe(entry: SessionEntry): string {
  if (entry.type === "message") return `a ${entry.message.role} message`;
  return `a ${entry.type.replace(/_/g, " ")} entry`;
}

/**
 * Resolve a pin target: an entry id on the branch (or a unique prefix of one, as the recall tools accept), a label
 * (its newest entry), or `last`: the newest message that is not part of `skip` (the caller's own pin request).
 */
export function resolvePinTarget(
  target: string,
  context: PinContext,
  skip: (entry: SessionEntry) => boolean = () => false,
): PinTarget {
  const name = target.trim();
  if (!name)
    return {
      ok: false,
      error:
        "target is empty: pass an entry id (context_timeline, context_list_entries and context_grep show them), a label, or last",
    };
  const { path, state } = context;
  let id: string | undefined;
  if (name === "last") {
    for (let i = path.length - 1; i >= 0 && id === undefined; i--)
      if (isPinnable(path[i]) && !skip(path[i])) id = path[i].id;
    if (id === undefined) return { ok: false, error: "there is no message on this branch to pin yet" };
  } else if (context.indexOf(name) >= 0) id = name;
  else {
    for (let i = path.length - 1; i >= 0 && id === undefined; i--)
      if (Object.hasOwn(state.labels, path[i].id) && state.labels[path[i].id] === name) id = path[i].id;
    if (id === undefined && name.length >= 4) {
      const matches = path.filter((e) => e.id.startsWith(name));
      if (matches.length === 1) id = matches[0].id;
      else if (matches.length > 1)
        return { ok: false, error: `${shown(name)} starts ${matches.length} entry ids; give more of the id` };
    }
  }
  if (id === undefined)
    return {
      ok: false,
      error: `${shown(name)} is not an entry id on this branch, a label, or last. context_timeline, context_list_entries and context_grep show entry ids.`,
    };
  const entry = context.get(id)!;
  if (!isPinnable(entry))
    return {
      ok: false,
      error: `${id} is ${describe(entry)}; only messages (user, assistant, tool results, custom messages) can be pinned`,
    };
  return { ok: true, id };
}

/** Tokens of the entries at these path indexes. */
function tokensOf(indexes: Iterable<number>, context: PinContext): number {
  let tokens = 0;
  for (const i of indexes) tokens += context.tokensAt(i);
  return tokens;
}

/** The budget figures: what the pins hold now, and the most they may hold. */
export interface PinFigures {
  /** Tokens of every pinned entry (each counted once, `<keepContext>` messages included). */
  pinned: number;
  /** `maxShare` of the window, rounded down. */
  budget: number;
}

/** Pinned tokens now (with `extra` pins as if written) and the budget. */
export function pinFigures(
  context: PinContext,
  window: number,
  maxShare: number,
  extra: readonly PinFact[] = [],
): PinFigures {
  const set = new PinSet([...activePins(context.state), ...extra], context);
  return { pinned: tokensOf(set.sorted, context), budget: Math.floor(window * maxShare) };
}

export type PinPlan =
  | { ok: true; data: PinData; entries: number; tokens: number; figures: PinFigures }
  | { ok: false; error: string };

/**
 * Plan pinning `id` (resolved): the fact, the entries it holds (a tool exchange is held whole) and their tokens. It is
 * refused, with the figures, when the pinned total would pass the budget; `pending` are pins asked for earlier in the
 * same step and not yet written.
 */
export function planPin(
  id: string,
  note: string | undefined,
  context: PinContext,
  window: number,
  maxShare: number,
  pending: readonly PinFact[] = [],
): PinPlan {
  const cleanNote = note?.trim() ? note.trim().slice(0, MAX_NOTE_CHARS) : undefined;
  const existing = [...activePins(context.state), ...pending].find((p) => p.targetId === id);
  const figures = pinFigures(context, window, maxShare, pending);
  const group = pinGroup(id, context).indexes;
  const held = new PinSet([...activePins(context.state), ...pending], context);
  if (existing && existing.note === cleanNote)
    return {
      ok: false,
      error: `${id} is already pinned${existing.implicit ? " (by <keepContext> in the message)" : ""}; nothing changed`,
    };
  const tokens = tokensOf(group, context);
  const added = tokensOf(
    group.filter((i) => !held.has(i)),
    context,
  );
  if (figures.pinned + added > figures.budget) {
    return {
      ok: false,
      error:
        `pinning ${id} was refused: it holds ~${tokens.toLocaleString("en-US")} tokens, the pins already hold ~${figures.pinned.toLocaleString("en-US")}, ` +
        `and together they would pass the pin budget of ${figures.budget.toLocaleString("en-US")} tokens (${Math.round(maxShare * 1000) / 10}% of the ${window.toLocaleString("en-US")}-token window). ` +
        "Unpin something first (/context pins lists them).",
    };
  }
  return {
    ok: true,
    data: { v: 1, targetId: id, pinned: true, ...(cleanNote !== undefined ? { note: cleanNote } : {}) },
    entries: group.length,
    tokens,
    figures: { pinned: figures.pinned + added, budget: figures.budget },
  };
}

export type UnpinPlan = { ok: true; facts: PinData[] } | { ok: false; error: string };

/**
 * Plan unpinning the entry `id` (resolved): one fact per pin that holds it, so unpinning either side of a tool
 * exchange lets go of the pin made through the other side.
 */
export function planUnpin(id: string, context: PinContext, pending: readonly PinFact[] = []): UnpinPlan {
  const at = context.indexOf(id);
  const facts: PinData[] = [];
  const seen = new Set<string>();
  for (const pin of [...activePins(context.state), ...pending]) {
    if (seen.has(pin.targetId)) continue;
    if (pin.targetId === id || pinGroup(pin.targetId, context).indexes.includes(at)) {
      seen.add(pin.targetId);
      facts.push({ v: 1, targetId: pin.targetId, pinned: false });
    }
  }
  return facts.length ? { ok: true, facts } : { ok: false, error: `${id} is not pinned` };
}

/** One row of `/context pins`. */
export interface PinRow {
  targetId: string;
  note?: string;
  implicit?: true;
  entries: number;
  tokens: number;
  /** Off this branch (pinned on another one, or a stray id): it holds nothing here. */
  absent: boolean;
}

/** Every pin of the state with what it holds on this path, oldest first. */
export function listPins(context: PinContext): PinRow[] {
  return activePins(context.state).map((pin) => {
    const group = pinGroup(pin.targetId, context).indexes;
    return {
      targetId: pin.targetId,
      ...(pin.note !== undefined ? { note: pin.note } : {}),
      ...(pin.implicit ? { implicit: true as const } : {}),
      entries: group.length,
      tokens: tokensOf(group, context),
      absent: group.length === 0,
    };
  });
}

/** `/context pins`: each pin with its entry, its note and its tokens, then the budget. Bounded to the newest 50. */
export function renderPins(context: PinContext, window: number, maxShare: number): string {
  const rows = listPins(context);
  const figures = pinFigures(context, window, maxShare);
  const head = `Pins: ${rows.length} (~${figures.pinned.toLocaleString("en-US")} of ${figures.budget.toLocaleString("en-US")} tokens allowed, ${Math.round(maxShare * 1000) / 10}% of the window)`;
  if (!rows.length)
    return `${head}\n  none. Pin an entry with /context pin <id|label|last> [note], or <keepContext>…</keepContext> in your message.`;
  const lines = [head];
  const from = Math.max(0, rows.length - 50);
  if (from) lines.push(`  … ${from} older pins not listed`);
  for (const row of rows.slice(from)) {
    const entry = context.get(row.targetId);
    const what = entry ? describe(entry) : "an entry not on this branch";
    const held = row.absent
      ? "holds nothing here"
      : `${row.entries} ${row.entries === 1 ? "entry" : "entries"}, ~${row.tokens.toLocaleString("en-US")} tokens`;
    const note =
      row.note !== undefined ? ` — ${quoted(row.note.length > 80 ? `${row.note.slice(0, 80)}…` : row.note)}` : "";
    // An id off the branch came from the file, not from this package: shown quoted, escaped and bounded.
    const id = entry ? row.targetId : quoted(row.targetId, 40);
    lines.push(`  ${id}: ${what}${row.implicit ? " (<keepContext>)" : ""}, ${held}${note}`);
  }
  return lines.join("\n");
}

/** The custom entry a pin plan writes. */
export const PIN_TYPE = CoreRecord.pin;
