// Reversible context: which acts on the branch hid something (range messages, compactions), how a
// restore target names one, and what revoking it would bring back, whole or its newest part within a token limit.
// Pure: the branch, its ledger state and the figures come in; no clocks, no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { type ActKind, type CompactionEntry, CoreRecord, type RestoreData, type SessionEntry } from "../log/entries.ts";
import { COMPACTION_ACT, type LedgerFacts, type MarkerDeclaration } from "../log/facts.ts";
import { quoted, shownName } from "../log/display.ts";
import { RangeMask } from "./ranges.ts";
import { effectiveCompaction, evolve, keptIndex, type LedgerState } from "./ledger-state.ts";
import { entryMessages, lookupOf, projectBranch } from "./project.ts";
import { type Calibration, estimateMessagesTokens, UNCALIBRATED } from "./tokens.ts";

/** One act on the branch that hid history. */
export interface ActInfo {
  id: string;
  kind: ActKind;
  /** How people call it: "fold", "tool summary #2", "checkpoint compaction" (its record declares it). */
  title: string;
  /** What its range hid, as a restore reports it coming back ("messages"). */
  hides: string;
  /** Its own message as a restore reports it leaving ("its summary"). */
  leaving: string;
  /** Path index of the act's entry. */
  index: number;
  /** The restore that revoked it whole. */
  revokedBy?: string;
  /** The restore that brought its newest part back. */
  narrowedBy?: string;
  /** Names that resolve to it besides its id: its label, then what its record declares (a checkpoint name, `#n`). */
  names: string[];
}

const isId = (path: readonly SessionEntry[], name: string) => path.some((e) => e.id === name);

/** Every act on the branch, oldest first. */
export function listActs(path: readonly SessionEntry[], state: LedgerState, facts: LedgerFacts): ActInfo[] {
  const acts: ActInfo[] = [];
  const narrowed = new Map<string, string>();
  for (const f of state.ranges) if (f.narrowedBy) narrowed.set(f.entryId, f.narrowedBy);
  for (const c of state.compactions) if (c.narrowedBy) narrowed.set(c.entryId, c.narrowedBy);
  path.forEach((entry, index) => {
    const fact = facts.read(entry);
    let act: Pick<ActInfo, "kind" | "title" | "hides" | "leaving" | "names">;
    if (fact.kind === "range") {
      const { declaration } = fact;
      const details = fact.entry.details as Record<string, unknown>;
      act = {
        kind: declaration.act,
        title: declaration.title(details),
        hides: declaration.hides,
        leaving: declaration.leaving,
        names: declaration.names(details, (name) => isId(path, name)),
      };
    } else if (fact.kind === "compaction" && !fact.marker) {
      // A checkpoint marker hides nothing of its own; the checkpoint it reports is the act.
      const strategy = (fact.entry.details as { strategy?: unknown } | undefined)?.strategy;
      // The strategy field is the file's: shown plain or quoted, it cannot break the line it is listed on.
      const title = `${strategy === undefined ? facts.piCompaction : shownName(strategy, 40)} compaction`;
      act = { kind: COMPACTION_ACT, title, hides: "messages", leaving: "its summary", names: [] };
    } else return;
    const label = state.labels[entry.id];
    if (label) act.names.unshift(label);
    acts.push({
      id: entry.id,
      kind: act.kind,
      title: act.title,
      hides: act.hides,
      leaving: act.leaving,
      index,
      ...(state.revoked[entry.id] ? { revokedBy: state.revoked[entry.id] } : {}),
      ...(narrowed.has(entry.id) ? { narrowedBy: narrowed.get(entry.id) } : {}),
      names: act.names,
    });
  });
  return acts;
}

export type Resolved = { ok: true; act: ActInfo } | { ok: false; error: string };

/** A bounded list of acts for error messages. */
function actList(acts: readonly ActInfo[]): string {
  const live = acts.filter((a) => !a.revokedBy).slice(-6);
  if (!live.length) return "There is nothing to restore on this branch.";
  return `Acts on this branch: ${live.map((a) => `${shownName(a.id)} (${a.title}${a.names.length ? `, ${quoted(a.names[0], 60)}` : ""})`).join(", ")}.`;
}

/** Why a checkpoint marker cannot be restored, and what to name instead (its declaration names what it reports). */
function markerRefusal(marker: CompactionEntry, declaration: MarkerDeclaration): string {
  const reported = declaration.reports((marker.details ?? {}) as Record<string, unknown>);
  return `compaction ${marker.id} only marks the end of a manual /compact and hides nothing; to bring back what it summarized, restore ${reported}.`;
}

/** The act that hides the entry at `index`, newest first: a range that holds it, or the compaction cut. */
function actHiding(
  path: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
  index: number,
  acts: readonly ActInfo[],
): ActInfo | undefined {
  const lookup = lookupOf(path);
  for (let i = state.ranges.length - 1; i >= 0; i--) {
    const rule = state.ranges[i];
    if (new RangeMask([rule], lookup, facts).hides(path[index], index)) return acts.find((a) => a.id === rule.entryId);
  }
  const cut = effectiveCompaction(state);
  if (!cut) return undefined;
  const at = lookup.indexOf(cut.entryId);
  const kept = keptIndex(cut, lookup.indexOf);
  const start = kept >= 0 && kept < at ? kept : at;
  return index < start ? acts.find((a) => a.id === cut.entryId) : undefined;
}

/**
 * Resolve a restore target: `last` (the newest act still in effect), an act's id, the id of an entry an act hides,
 * a label or a name its record declares (newest match: a fold's checkpoint name, `#n` for a tool checkpoint). Revoked
 * acts are refused here.
 */
export function resolveRestoreTarget(
  target: string,
  path: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
): Resolved {
  const name = target.trim();
  const acts = listActs(path, state, facts);
  if (!name) return { ok: false, error: `name what to restore: an act's id, a label, or "last". ${actList(acts)}` };
  let act: ActInfo | undefined;
  if (name === "last" || name === "latest") {
    act = [...acts].reverse().find((a) => !a.revokedBy);
    const newest = acts[acts.length - 1];
    if (!act && newest?.revokedBy)
      return {
        ok: false,
        error: `everything on this branch was already undone: the newest, ${newest.title} ${newest.id}, by ${newest.revokedBy}.`,
      };
    if (!act) return { ok: false, error: "there is nothing to restore on this branch." };
  }
  act ??= acts.find((a) => a.id === name);
  if (!act) {
    const index = path.findIndex((e) => e.id === name);
    const fact = index >= 0 ? facts.read(path[index]) : undefined;
    if (fact?.kind === "compaction" && fact.marker) return { ok: false, error: markerRefusal(fact.entry, fact.marker) };
    if (index >= 0) {
      act = actHiding(path, state, facts, index, acts);
      if (!act)
        return {
          ok: false,
          error: `entry ${shownName(name)} is not hidden by a fold, tool summary, digest or compaction; there is nothing to restore for it.`,
        };
    }
  }
  if (!act) {
    const named = [...acts].reverse().filter((a) => a.names.includes(name));
    act = named.find((a) => !a.revokedBy) ?? named[0];
    // A label on an ordinary entry names what hides that entry.
    if (!act) {
      for (const [id, label] of Object.entries(state.labels)) {
        if (label !== name) continue;
        const index = path.findIndex((e) => e.id === id);
        if (index >= 0) act = actHiding(path, state, facts, index, acts) ?? act;
      }
    }
  }
  if (!act)
    return {
      ok: false,
      error: `${quoted(name)} names no fold, tool summary, digest or compaction on this branch. ${actList(acts)}`,
    };
  if (act.revokedBy)
    return {
      ok: false,
      error: `${act.title} ${act.id} was already undone (by ${act.revokedBy}); restoring it twice changes nothing.`,
    };
  return { ok: true, act };
}

/** What a restore changes in the model view. */
export interface RestoreEffect {
  /** Entries whose messages come back, oldest first. */
  back: string[];
  messagesBack: number;
  /** Estimated tokens of the messages that come back, uncalibrated, as acts report what they hid. */
  tokensBack: number;
  /** Messages that leave the view (the act's own summary or checkpoint text). */
  tokensLeaving: number;
  /** Estimated view tokens before and after (the package's estimator). */
  viewBefore: number;
  viewAfter: number;
}

export interface RestoreRequest {
  path: readonly SessionEntry[];
  state: LedgerState;
  /** What the records mean (the same reader the state was folded with). */
  facts: LedgerFacts;
  act: ActInfo;
  /** Usage the figures start from (the provider's report when known); defaults to the estimated view. */
  currentTokens?: number;
  /** The most the context may hold after the restore (the strategy's threshold). */
  limit: number;
  /** When the whole act does not fit: bring back the newest part that does, instead of refusing. */
  newest: boolean;
  calibration?: Calibration;
}

export interface RestorePlan {
  data: RestoreData;
  act: ActInfo;
  effect: RestoreEffect;
  /** Usage expected after the restore. */
  tokensAfter: number;
  /** Set when only the newest part comes back: the usage the whole restore would have needed. */
  wholeTokensAfter?: number;
  /** Messages the whole restore would bring back, for the "N of M" of a partial one. */
  wholeMessages: number;
}

export type RestorePlanResult = { ok: true; plan: RestorePlan } | { ok: false; error: string };

const PREVIEW_ID = "context-ledger-restore-preview";

/** The view after appending a restore fact with `data`. */
function preview(path: readonly SessionEntry[], state: LedgerState, facts: LedgerFacts, data: RestoreData) {
  const last = path[path.length - 1];
  const fact = {
    type: "custom",
    id: PREVIEW_ID,
    parentId: last?.id ?? null,
    timestamp: last?.timestamp ?? new Date(0).toISOString(),
    customType: CoreRecord.restore,
    data,
  } as SessionEntry;
  const after = [...path, fact];
  return projectBranch(after, facts, evolve(state, facts.read(fact)));
}

function effectOf(
  path: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
  data: RestoreData,
  before: ReturnType<typeof projectBranch>,
  calibration: Calibration,
): RestoreEffect {
  const after = preview(path, state, facts, data);
  const shown = (p: ReturnType<typeof projectBranch>) =>
    new Map(p.entries.filter((e) => e.messages.length).map((e) => [e.sourceEntry.id, e.messages] as const));
  const was = shown(before);
  const now = shown(after);
  const back: string[] = [];
  const backMessages: AgentMessage[] = [];
  for (const entry of path) {
    const messages = now.get(entry.id);
    if (messages && !was.has(entry.id)) {
      back.push(entry.id);
      backMessages.push(...messages);
    }
  }
  const leaving: AgentMessage[] = [];
  for (const [id, messages] of was) if (!now.has(id)) leaving.push(...messages);
  return {
    back,
    messagesBack: backMessages.length,
    // The figure an act reports for what it hid (a digest's or tool summary's card, the dashboard) is the plain
    // estimate; what comes back is counted the same way, so the two agree. Only the context's total is calibrated.
    tokensBack: estimateMessagesTokens(backMessages),
    tokensLeaving: estimateMessagesTokens(leaving, calibration),
    viewBefore: estimateMessagesTokens(before.messages, calibration),
    viewAfter: estimateMessagesTokens(after.messages, calibration),
  };
}

/**
 * Path indexes in `[from, to]` where the newer part of a hidden range may start: an entry that sends messages, not a
 * tool result or a system message, and no tool call before it is answered at or after it (so a call and its result
 * are never split).
 */
export function cutPoints(path: readonly SessionEntry[], from: number, to: number): number[] {
  const callAt = new Map<string, number>();
  const open = new Array<number>(path.length + 1).fill(0);
  path.forEach((entry, i) => {
    if (entry.type !== "message") return;
    const m = entry.message;
    if (m.role === "assistant") for (const b of m.content ?? []) if (b.type === "toolCall") callAt.set(b.id, i);
    if (m.role === "toolResult") {
      const a = callAt.get(m.toolCallId);
      if (a !== undefined && a < i) {
        open[a + 1]++;
        open[i + 1]--;
      }
    }
  });
  const cuts: number[] = [];
  let depth = 0;
  for (let i = 0; i <= Math.min(to, path.length - 1); i++) {
    depth += open[i];
    if (i < from || depth > 0) continue;
    const entry = path[i];
    if (entry.type === "message" && (entry.message.role === "toolResult" || entry.message.role === "system")) continue;
    if (entryMessages(entry).length) cuts.push(i);
  }
  return cuts;
}

/** Restore data for bringing back `path[cut]` onwards of the act's hidden range. */
function partialData(act: ActInfo, path: readonly SessionEntry[], cut: number): RestoreData {
  return act.kind === COMPACTION_ACT
    ? { v: 1, targetId: act.id, act: act.kind, firstKeptEntryId: path[cut].id }
    : { v: 1, targetId: act.id, act: act.kind, throughId: path[cut - 1].id };
}

/** Where the newer part of the act's hidden range may start, oldest first. */
function partialCuts(act: ActInfo, path: readonly SessionEntry[], state: LedgerState, facts: LedgerFacts): number[] {
  const lookup = lookupOf(path);
  if (act.kind === COMPACTION_ACT) {
    const fact = state.compactions.find((c) => c.entryId === act.id)!;
    const kept = keptIndex(fact, lookup.indexOf);
    const end = kept >= 0 && kept < act.index ? kept : act.index;
    let previous = -1;
    for (let i = 0; i < act.index; i++) if (path[i].type === "compaction" && !facts.isMarker(path[i])) previous = i;
    return cutPoints(path, previous + 1, end - 1);
  }
  const rule = state.ranges.find((f) => f.entryId === act.id)!;
  const after = rule.afterId === null ? -1 : lookup.indexOf(rule.afterId);
  return cutPoints(path, after + 2, lookup.indexOf(rule.throughId));
}

/** Why an act in effect would bring nothing back. */
function inertReason(
  act: ActInfo,
  path: readonly SessionEntry[],
  state: LedgerState,
  facts: LedgerFacts,
  acts: readonly ActInfo[],
): string {
  const cut = effectiveCompaction(state);
  if (act.kind === COMPACTION_ACT && cut && cut.entryId !== act.id)
    return `the later compaction ${cut.entryId} hides the same history; restore that one first`;
  const over = actHiding(path, state, facts, act.index, acts);
  if (over && over.id !== act.id) return `the ${over.title} ${over.id} hides it too; restore that one first`;
  return "everything it hid is hidden by something else or already in view";
}

/**
 * Plan a restore. The whole act comes back when the expected usage stays within `limit`; otherwise the newest part
 * that fits (with `newest`), or a refusal with the figures. Nothing here appends anything.
 */
export function planRestore(request: RestoreRequest): RestorePlanResult {
  const { path, state, facts, act, limit } = request;
  const calibration = request.calibration ?? UNCALIBRATED;
  const acts = listActs(path, state, facts);
  const before = projectBranch(path, facts, state);
  const whole: RestoreData = { v: 1, targetId: act.id, act: act.kind };
  const effect = effectOf(path, state, facts, whole, before, calibration);
  if (!effect.back.length)
    return {
      ok: false,
      error: `restoring ${act.title} ${act.id} would bring nothing back: ${inertReason(act, path, state, facts, acts)}.`,
    };
  const current = request.currentTokens ?? effect.viewBefore;
  const expected = (e: RestoreEffect) => Math.max(0, current + e.viewAfter - e.viewBefore);
  const wholeAfter = expected(effect);
  if (wholeAfter <= limit)
    return {
      ok: true,
      plan: { data: whole, act, effect, tokensAfter: wholeAfter, wholeMessages: effect.messagesBack },
    };

  const figures = `restoring ${act.title} ${act.id} whole would bring back ${effect.messagesBack} messages (~${fmt(effect.tokensBack)} tokens) and take the context from ~${fmt(current)} to ~${fmt(wholeAfter)} tokens, above the limit of ${fmt(limit)}`;
  if (!request.newest) return { ok: false, error: `${figures}. Nothing was restored.` };
  // Later cuts bring back less, so the usage falls as the cut moves on: find the earliest cut that fits.
  const cuts = partialCuts(act, path, state, facts);
  let lo = 0;
  let hi = cuts.length;
  let best: { data: RestoreData; effect: RestoreEffect; after: number } | undefined;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const data = partialData(act, path, cuts[mid]);
    const e = effectOf(path, state, facts, data, before, calibration);
    const after = expected(e);
    if (after <= limit && e.back.length) {
      best = { data, effect: e, after };
      hi = mid;
    } else lo = mid + 1;
  }
  if (!best) return { ok: false, error: `${figures}, and even its newest part does not fit. Nothing was restored.` };
  return {
    ok: true,
    plan: {
      data: best.data,
      act,
      effect: best.effect,
      tokensAfter: best.after,
      wholeTokensAfter: wholeAfter,
      wholeMessages: effect.messagesBack,
    },
  };
}

const fmt = (n: number) => Math.round(n).toLocaleString("en-US");

/** The one short message that tells the model (and the user) what came back. */
export function renderRestored(plan: RestorePlan, limit: number): string {
  const { act, effect } = plan;
  const { hides: what, leaving } = act;
  const span = effect.back.length ? ` (entries ${effect.back[0]} to ${effect.back[effect.back.length - 1]})` : "";
  if (plan.wholeTokensAfter === undefined) {
    return `[context restored] ${capitalize(act.title)} ${act.id} was undone: the ${effect.messagesBack} ${what} it hid (~${fmt(effect.tokensBack)} tokens) are back in their original place${span}, and ${leaving} left the context. Context now ~${fmt(plan.tokensAfter)} tokens.`;
  }
  return `[context restored] The newest part of ${act.title} ${act.id} is back: ${effect.messagesBack} of the ${plan.wholeMessages} ${what} it hid (~${fmt(effect.tokensBack)} tokens), in their original place${span}. The older part stays hidden: restoring all of it would take the context to ~${fmt(plan.wholeTokensAfter)} tokens, above the limit of ${fmt(limit)}. Context now ~${fmt(plan.tokensAfter)} tokens.`;
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
