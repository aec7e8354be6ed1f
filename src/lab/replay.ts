// The replay: feeds a session's active branch to each group of rows in turn, entry by entry, the way Pi grows the
// context, and measures each provider request (one per assistant message): context size, cached prefix, the
// actions a row took before it, what the agent needed later and whether the view still showed it, and at
// the end which probes survive and which the ledger can still recover.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { forgetNames } from "../strategies/digest/plan.ts";
import { forgetPlannedMemos } from "../strategies/planned/planner.ts";
import { type Prices, RequestTotals, type SideCall } from "./metrics.ts";
import { asProbe, isNeededAt, NEEDED_KINDS, type NeededItem, type NeededKind, neededItems } from "./needed.ts";
import { observers, Presence, type PresenceCounts } from "./presence.ts";
import { extractProbes, PROBE_KINDS, type Probe, type ProbeKind } from "./probes.ts";
import { checkedProbes, indexedSearch, MAX_CHECKED, recoverability } from "./recoverability.ts";
import type { Recommendation } from "./recommendation.ts";
import { spillSourceTexts } from "./source-texts.ts";
import { checkedBranch } from "./tree-check.ts";
import { rereadCost, type ViewPresence, WorkingSet, type WorkingSetFigures, WorkingSetTally } from "./working-set.ts";
import type { ContextAction, LabSettings, Row, RowFactory, RowInfo } from "./row.ts";

/** A session to replay: its entries as loaded (any order the file had), plus what loading noticed. */
export interface SessionInput {
  name: string;
  path?: string;
  /** Working directory from the session header; "" or absent when unknown. */
  cwd?: string;
  entries: readonly SessionEntry[];
  /**
   * The caller gives `entries` up: the replay empties the array once it has taken the branch, moves the messages'
   * long texts to the spill file (source-texts.ts), and lets each entry go as the recall index renders it, so a long
   * session is never held next to its whole rendering. Without it, the caller's objects are left as they were.
   */
  handOver?: boolean;
  malformedLines?: { line: number; reason: string }[];
  unknownTypes?: Record<string, number>;
}

/** One action a row took, with what it left. */
export interface ActionRecord {
  kind: string;
  /** Index of the request it preceded. */
  request: number;
  tokensBefore: number;
  tokensAfter: number;
  sideCalls: SideCall[];
  latencyMs?: number;
  modelCall?: boolean;
  /** Measured acts only (see MAX_MEASURED): share of the probes seen so far still in the view right after the act. */
  retention?: number;
  /** Measured acts only: items the agent uses after this act that appeared before it, and how many the view shows. */
  needed?: { total: number; visible: number };
}

/** "Needed later" over a row's measured acts: pairs (act, item) needed, shown, and recoverable by context_grep. */
export interface NeededLater {
  /** Acts measured. */
  acts: number;
  /** (act, item) pairs needed, and of them visible right after the act. */
  needed: number;
  visible: number;
  /** visible / needed (1 when nothing was needed). */
  share: number;
  byKind: Record<NeededKind, { needed: number; visible: number }>;
  /** Of the pairs not visible, the share whose item context_grep finds in its first entry (ledger rows only). */
  recoverable?: { share: number; found: number; missing: number; checked: number };
}

export interface RowResult {
  info: RowInfo;
  requests: number;
  peakTokens: number;
  meanTokens: number;
  /** Requests whose context exceeded the window (a real provider would reject them). */
  overWindow: number;
  /** Context tokens per request, downsampled for charts: [request index, tokens]. */
  series: [number, number][];
  actions: ActionRecord[];
  /** Number of actions (compactions, folds, truncations, maskings, clearings, prunes). */
  compactions: number;
  retention: { share: number; kept: number; total: number; byKind: Record<ProbeKind, { kept: number; total: number }> };
  /** Over `checked` dropped probes (all of them, or an even sample of 200). */
  recoverability?: { share: number; found: number; dropped: number; checked: number };
  neededLater: NeededLater;
  /** The text later edits replace: how much of it the row's views showed at the edit's request (see working-set.ts). */
  workingSet: WorkingSetFigures;
  cache: { reuse: number; promptTokens: number; cachedTokens: number };
  /** Requests, side calls and the re-reads the working set's misses force; `reread` is that last part. */
  cost: { units: number; usd: number; reread: { units: number; usd: number } };
  sideCalls: { count: number; inputTokens: number; outputTokens: number };
}

export interface SessionResult {
  name: string;
  path?: string;
  /** The working directory the session ran in (from its header), "" when unknown. */
  cwd: string;
  entries: number;
  branchEntries: number;
  requests: number;
  probes: { total: number; byKind: Record<ProbeKind, number> };
  /** Distinct items the agent used again after they first appeared. */
  neededItems: number;
  /** Replaced texts of the agent's edits (of at least 8 characters), and those it had seen before the call: every row's denominator. */
  workingSet: { texts: number; seen: number };
  /** Compaction entries already in the file; the replay drops them so every row starts from the raw history. */
  originalCompactions: number;
  malformedLines: { line: number; reason: string }[];
  unknownTypes: Record<string, number>;
  /** Problems of the session tree (cycles, duplicate ids, dangling parents). */
  treeProblems: string[];
  rows: RowResult[];
  /** The recommendation for this session alone (set by the lab command). */
  recommendation?: Recommendation;
}

export interface ReplayOptions {
  settings: LabSettings;
  rows: readonly RowFactory[];
  prices: Prices;
  /** Called now and then with entries done and total. */
  onProgress?: (done: number, total: number) => void;
  /** Points kept per series for charts. */
  seriesPoints?: number;
  /** Sees each row's final model view (the judge asks its questions against it). */
  onFinalView?: (session: string, row: RowInfo, messages: readonly AgentMessage[], probes: readonly Probe[]) => void;
  /** Sees the view right after every act of every row (`--dump`). */
  onAct?: (act: ActView) => void | Promise<void>;
  /** Called once a session's rows are summarized and dropped, before its recall index is built (the CLI collects garbage here). */
  onRowsReleased?: () => void;
}

/** The model view right after one act, as `--dump` writes it. */
export interface ActView {
  session: string;
  row: RowInfo;
  /** Index of the act within the row, from 0. */
  act: number;
  kind: string;
  /** Index of the request the act preceded. */
  request: number;
  /** Id of the newest entry on the row's ledger (its own fact after a compaction or fold), else of the newest source entry. */
  leafEntryId: string | null;
  tokens: number;
  messages: readonly AgentMessage[];
}

/**
 * Acts measured per row (retention and needed-later right after the act): at most one in each of this many
 * equal slices of the session's requests, the first act in the slice. The same rule for every row.
 */
export const MAX_MEASURED = 200;

/** The active branch without the file's own compactions, re-linked so parent ids still chain. */
export function replayBranch(entries: readonly SessionEntry[]): {
  branch: SessionEntry[];
  originalCompactions: number;
  treeProblems: string[];
} {
  const { branch: path, problems } = checkedBranch(entries);
  const branch: SessionEntry[] = [];
  let dropped = 0;
  let relink = false;
  for (const entry of path) {
    if (entry.type === "compaction") {
      dropped++;
      relink = true;
      continue;
    }
    const parentId = branch.length ? branch[branch.length - 1].id : null;
    branch.push(relink && entry.parentId !== parentId ? ({ ...entry, parentId } as SessionEntry) : entry);
    relink = false;
  }
  return { branch, originalCompactions: dropped, treeProblems: problems };
}

function isRequestPoint(entry: SessionEntry): boolean {
  return entry.type === "message" && entry.message.role === "assistant";
}

/** True when a session's active branch holds a request to replay (an answer on it): what a replay counts. */
export function holdsRequest(entries: readonly SessionEntry[]): boolean {
  return checkedBranch(entries).branch.some(isRequestPoint);
}

interface RowState {
  row: Row;
  /** Running sums over the row's requests (no record per request is kept). */
  totals: RequestTotals;
  /** Prompt tokens per request, for the peak, the over-window count and the chart series. */
  tokens: number[];
  actions: ActionRecord[];
  /** Slice of the session (see MAX_MEASURED) of the last measured act. */
  measuredSlice: number;
  /** Needed items not visible right after measured acts: item -> number of acts. */
  missed: Uint32Array;
  neededByKind: NeededLater["byKind"];
  newestSource: string | null;
  /** The working set's texts the view holds, kept current as the view changes, and the row's tally of them. */
  presence: ViewPresence;
  workingSet: WorkingSetTally;
  /** The probes and needed items the view holds, kept current as the view changes. */
  shown: PresenceCounts;
}

function downsample(values: readonly number[], points: number): [number, number][] {
  if (values.length <= points) return values.map((v, i) => [i, v]);
  const out: [number, number][] = [];
  const step = values.length / points;
  for (let k = 0; k < points; k++) {
    // Keep the bucket's maximum, so peaks survive the downsampling.
    const from = Math.floor(k * step);
    const to = Math.min(values.length, Math.floor((k + 1) * step));
    let best = from;
    for (let i = from; i < to; i++) if (values[i] > values[best]) best = i;
    out.push([best, values[best]]);
  }
  const last = values.length - 1;
  if (out[out.length - 1][0] !== last) out.push([last, values[last]]);
  return out;
}

/** What a measured act keeps: retention of the probes seen so far and visibility of the needed items. */
function measureAct(
  state: RowState,
  probes: readonly Probe[],
  items: readonly NeededItem[],
  position: number,
): Pick<ActionRecord, "retention" | "needed"> {
  const { shown } = state;
  let seen = 0;
  let kept = 0;
  for (let k = 0; k < probes.length && probes[k].index < position; k++) {
    seen++;
    if (shown.hasProbe(k)) kept++;
  }
  const retention = seen ? kept / seen : 1;
  // The items needed at `position`, counted in place: items come sorted by first appearance, so none after the
  // first that appears at or after it is needed.
  let total = 0;
  let visible = 0;
  for (const item of items) {
    if (item.first >= position) break;
    if (!isNeededAt(item, position)) continue;
    total++;
    const counts = state.neededByKind[item.kind];
    counts.needed++;
    if (shown.hasItem(item)) {
      visible++;
      counts.visible++;
    } else state.missed[item.index]++;
  }
  return { retention, needed: { total, visible } };
}

/**
 * Longest stretch of replay between two turns of the event loop, in milliseconds. Awaiting the rows' promises
 * never lets timers or I/O run; an explicit turn does, so a parent that went away (see bin.ts) or a worker's
 * messages are noticed mid-session.
 */
const YIELD_MS = 50;

/** One turn of the event loop: timers, I/O and process events run, then the replay goes on. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Replay one session through every row: each group of rows (see {@link RowFactory}) in one pass over its branch. */
export async function replaySession(session: SessionInput, options: ReplayOptions): Promise<SessionResult> {
  const { branch, originalCompactions, treeProblems } = replayBranch(session.entries);
  const entryCount = session.entries.length;
  const branchEntries = branch.length;
  if (session.handOver) (session.entries as SessionEntry[]).length = 0;
  const cwd = session.cwd ?? "";
  const probes = extractProbes(branch, cwd);
  const items = neededItems(branch, cwd);
  const workingSet = new WorkingSet(branch, cwd);
  if (session.handOver) spillSourceTexts(branch);
  const requestPoints = branch.reduce((n, e) => n + (isRequestPoint(e) ? 1 : 0), 0);
  // The rows, their views and the presence memo live only inside this call; once it returns they can be
  // collected, and the collector is asked to, before the recall index (a rendering of the whole branch) is built.
  const summaries = await replayRows(session.name, branch, cwd, probes, items, workingSet, requestPoints, options);
  options.onRowsReleased?.();
  // Every ledger row keeps every source entry, and probes and needed items are attributed to source entries:
  // one recall index of the branch serves every row (the rows' own summaries are not searched). Building it
  // empties `branch`.
  // Every probe and item a ledger row will ask about is known here, so the search settles them all in one pass, run
  // as the index is built: each entry's rendering is searched, then moved to the spill file.
  const ledgerRows = summaries.filter((s) => s.hasLedger);
  const search = ledgerRows.length
    ? indexedSearch(
        branch,
        ledgerRows.flatMap((s) => [...checkedProbes(s.missing), ...checkedItems(items, s.missed).map(asProbe)]),
      )
    : undefined;
  const rows: RowResult[] = [];
  for (const { result, missing, missed, hasLedger } of summaries) {
    if (hasLedger && search) {
      result.recoverability = recoverability(missing, search);
      result.neededLater.recoverable = neededRecoverable(items, missed, search);
    }
    rows.push(result);
  }
  const byKind = Object.fromEntries(PROBE_KINDS.map((k) => [k, probes.filter((p) => p.kind === k).length])) as Record<
    ProbeKind,
    number
  >;
  return {
    name: session.name,
    ...(session.path ? { path: session.path } : {}),
    cwd,
    entries: entryCount,
    branchEntries,
    requests: requestPoints,
    probes: { total: probes.length, byKind },
    neededItems: items.length,
    workingSet: { texts: workingSet.texts.length, seen: workingSet.seen.length },
    originalCompactions,
    malformedLines: session.malformedLines ?? [],
    unknownTypes: session.unknownTypes ?? {},
    treeProblems,
    rows,
  };
}

/** What a row leaves once replayed: its figures, the probes its final view lost, the needed items its acts missed. */
interface RowSummary {
  result: RowResult;
  missing: Probe[];
  missed: Uint32Array;
  hasLedger: boolean;
}

/**
 * The rows in groups: consecutive rows with the same `replaysWith` form one group, any other row is a group alone.
 * Each group hears the whole branch, its rows in step, and is summarized and dropped before the next group starts,
 * so a long session holds one group's views, ledgers and per-request state at a time. Returns each row's summary.
 */
async function replayRows(
  sessionName: string,
  branch: readonly SessionEntry[],
  cwd: string,
  probes: readonly Probe[],
  items: readonly NeededItem[],
  workingSet: WorkingSet,
  requestPoints: number,
  options: ReplayOptions,
): Promise<RowSummary[]> {
  const presence = new Presence(probes, items);
  const pass: Pass = {
    sessionName,
    branch,
    probes,
    items,
    workingSet,
    options,
    slice: Math.max(1, Math.ceil(requestPoints / MAX_MEASURED)),
    total: branch.length * options.rows.length,
    done: 0,
    lastYield: performance.now(),
  };
  const summaries: RowSummary[] = [];
  for (const group of rowGroups(options.rows)) {
    const states = group.map((factory) => rowState(factory, cwd, items, workingSet, presence, options));
    await replayGroup(states, pass);
    forgetStrategyMemos();
    for (const state of states) {
      options.onFinalView?.(sessionName, state.row.info, state.row.view.messages, probes);
      const { result, missing } = summarizeRow(state, probes, options);
      summaries.push({ result, missing, missed: state.missed, hasLedger: state.row.ledger !== undefined });
    }
  }
  return summaries;
}

/**
 * What the strategies' process-wide memos hold of the session (digest's names; planned's views, readings and
 * transcripts, which hold its entries) serves only the rows of the strategy that made them, side by side in one
 * group: once a group is done it is of no use to the next group, nor to the next session.
 */
function forgetStrategyMemos(): void {
  forgetNames();
  forgetPlannedMemos();
}

/** Consecutive rows that replay side by side (see {@link RowFactory}). */
function rowGroups(rows: readonly RowFactory[]): RowFactory[][] {
  const groups: RowFactory[][] = [];
  for (const factory of rows) {
    const last = groups[groups.length - 1];
    if (last && factory.replaysWith !== undefined && last[0].replaysWith === factory.replaysWith) last.push(factory);
    else groups.push([factory]);
  }
  return groups;
}

/** What every group's pass over a session shares: the session, the options, and the progress made. */
interface Pass {
  sessionName: string;
  branch: readonly SessionEntry[];
  probes: readonly Probe[];
  items: readonly NeededItem[];
  workingSet: WorkingSet;
  options: ReplayOptions;
  /** Requests per measured slice (see MAX_MEASURED). */
  slice: number;
  /** Entries all rows hear together (entries times rows), and how many they have heard. */
  total: number;
  done: number;
  lastYield: number;
}

function rowState(
  factory: RowFactory,
  cwd: string,
  items: readonly NeededItem[],
  workingSet: WorkingSet,
  presence: Presence,
  options: ReplayOptions,
): RowState {
  const row = factory({ ...options.settings, cwd });
  const held = workingSet.tracker();
  const shown = presence.tracker();
  // Without a seen text there is nothing to look for, and no message needs scanning for the working set.
  row.view.observe(workingSet.seen.length ? observers(held, shown) : shown);
  return {
    row,
    totals: new RequestTotals(options.prices),
    tokens: [],
    actions: [],
    measuredSlice: -1,
    missed: new Uint32Array(items.length),
    neededByKind: Object.fromEntries(NEEDED_KINDS.map((k) => [k, { needed: 0, visible: 0 }])) as NeededLater["byKind"],
    newestSource: null,
    presence: held,
    workingSet: new WorkingSetTally(),
    shown,
  };
}

/** One group's pass over the branch: before each request its rows may act, then the request is measured, then every row hears the entry. */
async function replayGroup(states: readonly RowState[], pass: Pass): Promise<void> {
  const { branch, options } = pass;
  const progressEvery = Math.max(1, Math.floor(pass.total / 100));
  let request = 0;
  for (let i = 0; i < branch.length; i++) {
    const entry = branch[i];
    if (isRequestPoint(entry)) {
      for (const state of states) await beforeRequest(state, request, i, pass);
      request++;
    }
    for (const state of states) {
      state.row.append(entry);
      state.newestSource = entry.id;
    }
    const before = pass.done;
    pass.done += states.length;
    if (
      options.onProgress &&
      (Math.floor(pass.done / progressEvery) > Math.floor(before / progressEvery) || pass.done === pass.total)
    )
      options.onProgress(pass.done, pass.total);
    if (performance.now() - pass.lastYield > YIELD_MS) {
      await yieldToEventLoop();
      pass.lastYield = performance.now();
    }
  }
}

/** Request `request` (at branch position `position`) for one row: the act it takes first, then the request's figures. */
async function beforeRequest(state: RowState, request: number, position: number, pass: Pass): Promise<void> {
  const { options, probes, items, workingSet } = pass;
  const action: (ContextAction & { latencyMs?: number }) | undefined = await state.row.beforeRequest();
  if (action) {
    const current = Math.floor(request / pass.slice);
    const measured = current > state.measuredSlice;
    if (measured) state.measuredSlice = current;
    state.actions.push({
      kind: action.kind,
      request,
      tokensBefore: action.tokensBefore,
      tokensAfter: state.row.view.tokens,
      sideCalls: action.sideCalls,
      ...(action.latencyMs !== undefined ? { latencyMs: action.latencyMs } : {}),
      ...(action.modelCall ? { modelCall: true } : {}),
      ...(measured ? measureAct(state, probes, items, position) : {}),
    });
    if (options.onAct) {
      const ledger = state.row.ledger?.();
      await options.onAct({
        session: pass.sessionName,
        row: state.row.info,
        act: state.actions.length - 1,
        kind: action.kind,
        request,
        leafEntryId: ledger?.length ? ledger[ledger.length - 1].id : state.newestSource,
        tokens: state.row.view.tokens,
        messages: state.row.view.messages,
      });
    }
    state.workingSet.act(request);
  }
  const edited = workingSet.at(request);
  if (edited.length)
    state.workingSet.request(request, edited, (text) => state.presence.holds(text), state.row.view.tokens);
  const tokens = state.row.view.markRequest();
  state.totals.add(tokens);
  state.tokens.push(tokens.prompt);
}

/** The items whose recoverability is checked: those a row's views missed, or an even sample of MAX_CHECKED of them. */
function checkedItems(items: readonly NeededItem[], missed: Uint32Array): NeededItem[] {
  const all = items.filter((item) => missed[item.index] > 0);
  return all.length <= MAX_CHECKED
    ? all
    : Array.from({ length: MAX_CHECKED }, (_, i) => all[Math.floor((i * all.length) / MAX_CHECKED)]);
}

/** Of the (act, item) pairs a row's views missed, the share whose item context_grep finds (on an even sample of items). */
function neededRecoverable(
  items: readonly NeededItem[],
  missed: Uint32Array,
  search: (probe: Probe) => boolean,
): NeededLater["recoverable"] {
  const checked = checkedItems(items, missed);
  let found = 0;
  let missing = 0;
  for (const item of checked) {
    const pairs = missed[item.index];
    missing += pairs;
    if (search(asProbe(item))) found += pairs;
  }
  return { share: missing ? found / missing : 1, found, missing, checked: checked.length };
}

/** "Needed later" totals over a row's measured acts. */
function neededLater(state: RowState): NeededLater {
  let acts = 0;
  let needed = 0;
  let visible = 0;
  for (const action of state.actions) {
    if (!action.needed) continue;
    acts++;
    needed += action.needed.total;
    visible += action.needed.visible;
  }
  return { acts, needed, visible, share: needed ? visible / needed : 1, byKind: state.neededByKind };
}

/** A row's figures, all but recoverability (which needs only the ledger), plus the probes its final view lost. */
function summarizeRow(
  state: RowState,
  probes: readonly Probe[],
  options: ReplayOptions,
): { result: RowResult; missing: Probe[] } {
  const { row, totals, tokens, actions, shown } = state;
  const lost = probes.filter((_, k) => !shown.hasProbe(k));
  const final = {
    kept: probes.length - lost.length,
    total: probes.length,
    share: probes.length ? (probes.length - lost.length) / probes.length : 1,
    missing: lost,
  };
  const missing = new Set(final.missing);
  const byKind = Object.fromEntries(
    PROBE_KINDS.map((kind) => {
      const ofKind = probes.filter((p) => p.kind === kind);
      return [kind, { kept: ofKind.filter((p) => !missing.has(p)).length, total: ofKind.length }];
    }),
  ) as Record<ProbeKind, { kept: number; total: number }>;
  const sideCalls = actions.flatMap((a) => a.sideCalls);
  const workingSet = state.workingSet.figures();
  const reread = rereadCost(workingSet, options.prices);
  const requestCost = totals.cost(sideCalls);
  const result: RowResult = {
    info: row.info,
    requests: totals.count,
    peakTokens: tokens.reduce((m, t) => Math.max(m, t), 0),
    meanTokens: tokens.length ? totals.prompt / tokens.length : 0,
    overWindow: tokens.filter((t) => t > options.settings.window).length,
    series: downsample(tokens, options.seriesPoints ?? 240),
    actions,
    compactions: actions.length,
    retention: { share: final.share, kept: final.kept, total: final.total, byKind },
    neededLater: neededLater(state),
    // Filled in by the caller once the row is released (the key keeps its place in the JSON).
    ...(row.ledger ? { recoverability: { share: 0, found: 0, dropped: 0, checked: 0 } } : {}),
    workingSet,
    cache: { reuse: totals.reuse, promptTokens: totals.prompt, cachedTokens: totals.cached },
    cost: { units: requestCost.units + reread.units, usd: requestCost.usd + reread.usd, reread },
    sideCalls: {
      count: sideCalls.length,
      inputTokens: sideCalls.reduce((s, c) => s + c.input, 0),
      outputTokens: sideCalls.reduce((s, c) => s + c.output, 0),
    },
  };
  return { result, missing: final.missing };
}
