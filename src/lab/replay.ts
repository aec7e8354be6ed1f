// The replay: feeds a session's active branch to every row turn by turn, the way Pi grows the context, and
// measures each provider request (one per assistant message): context size, cached prefix, the actions a
// row took before it, and at the end which probes survive and which the ledger can still recover.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { cacheReuse, type Prices, type RequestTokens, requestCost, type SideCall } from "./metrics.ts";
import { extractProbes, PROBE_KINDS, type Probe, type ProbeKind, viewRetention } from "./probes.ts";
import { contextGrepSearch, ledgerIndex, recoverability, type SourceIndex, sourceIndex } from "./recoverability.ts";
import { checkedBranch } from "./tree-check.ts";
import { type ContextAction, type LabSettings, type Row, type RowFactory, type RowInfo, visibleMessages } from "./row.ts";

/** A session to replay: its entries as loaded (any order the file had), plus what loading noticed. */
export interface SessionInput {
  name: string;
  path?: string;
  /** Working directory from the session header; "" or absent when unknown. */
  cwd?: string;
  entries: readonly SessionEntry[];
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
  /** Share of the probes seen so far still in the view right after the action (not computed for per-step masking). */
  retention?: number;
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
  cache: { reuse: number; promptTokens: number; cachedTokens: number };
  cost: { units: number; usd: number };
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
  /** Compaction entries already in the file; the replay drops them so every row starts from the raw history. */
  originalCompactions: number;
  malformedLines: { line: number; reason: string }[];
  unknownTypes: Record<string, number>;
  /** Problems of the session tree (cycles, duplicate ids, dangling parents). */
  treeProblems: string[];
  rows: RowResult[];
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
}

/** Kinds of action that happen on (nearly) every step; retention after each of them is not computed. */
const PER_STEP_KINDS = new Set(["masking", "clearing", "truncation"]);

/** The active branch without the file's own compactions, re-linked so parent ids still chain. */
export function replayBranch(entries: readonly SessionEntry[]): { branch: SessionEntry[]; originalCompactions: number; treeProblems: string[] } {
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

interface RowState {
  row: Row;
  requests: RequestTokens[];
  tokens: number[];
  actions: ActionRecord[];
}

type SourceOf = (probe: Probe) => readonly AgentMessage[];

/** Probes found before `index`, checked against a row's current view. */
function retentionSoFar(row: Row, probes: readonly Probe[], index: number, sourceOf: SourceOf): number {
  const seen = probes.filter((p) => p.index < index);
  return viewRetention(seen, row.view.messages, sourceOf).share;
}

/** Per-action retention is measured for the first actions of a row and then for every tenth. */
function measuresAction(count: number): boolean {
  return count < 40 || count % 10 === 0;
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

/** Replay one session through every row. */
export async function replaySession(session: SessionInput, options: ReplayOptions): Promise<SessionResult> {
  const { branch, originalCompactions, treeProblems } = replayBranch(session.entries);
  const cwd = session.cwd ?? "";
  const probes = extractProbes(branch, cwd);
  const sourceMessages = new Map<string, readonly AgentMessage[]>();
  for (const probe of probes) if (!sourceMessages.has(probe.entryId)) sourceMessages.set(probe.entryId, visibleMessages(branch[probe.index]));
  const sourceOf: SourceOf = (probe) => sourceMessages.get(probe.entryId) ?? [];
  // Rows are independent, so each replays the branch on its own: memory holds the session and one row's
  // state at a time, and a row's garbage is gone before the next one starts.
  const rows: RowResult[] = [];
  // The branch's recall rendering is shared by every row that leaves a ledger; built when the first one ends.
  let source: SourceIndex | undefined;
  const requestPoints = branch.reduce((n, e) => n + (isRequestPoint(e) ? 1 : 0), 0);
  const total = branch.length * options.rows.length;
  const progressEvery = Math.max(1, Math.floor(total / 100));
  let done = 0;
  for (const factory of options.rows) {
    let state: RowState | undefined = { row: factory({ ...options.settings, cwd }), requests: [], tokens: [], actions: [] };
    let request = 0;
    for (let i = 0; i < branch.length; i++) {
      const entry = branch[i];
      if (isRequestPoint(entry)) {
        const action: (ContextAction & { latencyMs?: number }) | undefined = await state.row.beforeRequest();
        if (action) {
          state.actions.push({
            kind: action.kind,
            request,
            tokensBefore: action.tokensBefore,
            tokensAfter: state.row.view.tokens,
            sideCalls: action.sideCalls,
            ...(action.latencyMs !== undefined ? { latencyMs: action.latencyMs } : {}),
            ...(action.modelCall ? { modelCall: true } : {}),
            ...(PER_STEP_KINDS.has(action.kind) || !measuresAction(state.actions.length) ? {} : { retention: retentionSoFar(state.row, probes, i, sourceOf) }),
          });
        }
        const tokens = state.row.view.markRequest();
        state.requests.push(tokens);
        state.tokens.push(tokens.prompt);
        request++;
      }
      state.row.append(entry);
      if (options.onProgress && (++done % progressEvery === 0 || done === total)) options.onProgress(done, total);
    }
    options.onFinalView?.(session.name, state.row.info, state.row.view.messages, probes);
    const { result, missing } = summarizeRow(state, probes, options, sourceOf);
    // Only the ledger's entries are needed from here on: the row (view, planner state) goes before the index is built.
    const ledger = state.row.ledger ? [...state.row.ledger()] : undefined;
    state = undefined;
    if (ledger) {
      source ??= sourceIndex(branch);
      result.recoverability = recoverability(missing, contextGrepSearch(ledgerIndex(source, ledger)));
    }
    rows.push(result);
  }
  const request = requestPoints;
  const byKind = Object.fromEntries(PROBE_KINDS.map((k) => [k, probes.filter((p) => p.kind === k).length])) as Record<ProbeKind, number>;
  return {
    name: session.name,
    ...(session.path ? { path: session.path } : {}),
    cwd,
    entries: session.entries.length,
    branchEntries: branch.length,
    requests: request,
    probes: { total: probes.length, byKind },
    originalCompactions,
    malformedLines: session.malformedLines ?? [],
    unknownTypes: session.unknownTypes ?? {},
    treeProblems,
    rows,
  };
}

/** A row's figures, all but recoverability (which needs only the ledger), plus the probes its final view lost. */
function summarizeRow(state: RowState, probes: readonly Probe[], options: ReplayOptions, sourceOf: SourceOf): { result: RowResult; missing: Probe[] } {
  const { row, requests, tokens, actions } = state;
  const final = viewRetention(probes, row.view.messages, sourceOf);
  const missing = new Set(final.missing);
  const byKind = Object.fromEntries(
    PROBE_KINDS.map((kind) => {
      const ofKind = probes.filter((p) => p.kind === kind);
      return [kind, { kept: ofKind.filter((p) => !missing.has(p)).length, total: ofKind.length }];
    }),
  ) as Record<ProbeKind, { kept: number; total: number }>;
  const sideCalls = actions.flatMap((a) => a.sideCalls);
  const promptTokens = requests.reduce((s, r) => s + r.prompt, 0);
  const cachedTokens = requests.reduce((s, r) => s + r.cached, 0);
  const result: RowResult = {
    info: row.info,
    requests: requests.length,
    peakTokens: tokens.reduce((m, t) => Math.max(m, t), 0),
    meanTokens: tokens.length ? promptTokens / tokens.length : 0,
    overWindow: tokens.filter((t) => t > options.settings.window).length,
    series: downsample(tokens, options.seriesPoints ?? 240),
    actions,
    compactions: actions.length,
    retention: { share: final.share, kept: final.kept, total: final.total, byKind },
    // Filled in by the caller once the row is released (the key keeps its place in the JSON).
    ...(row.ledger ? { recoverability: { share: 0, found: 0, dropped: 0, checked: 0 } } : {}),
    cache: { reuse: cacheReuse(requests), promptTokens, cachedTokens },
    cost: requestCost(requests, sideCalls, options.prices),
    sideCalls: { count: sideCalls.length, inputTokens: sideCalls.reduce((s, c) => s + c.input, 0), outputTokens: sideCalls.reduce((s, c) => s + c.output, 0) },
  };
  return { result, missing: final.missing };
}
