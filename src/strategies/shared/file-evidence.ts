// Cumulative read/modified file lists and the evidence labels beside them: what the retained tail still
// shows of each file, judged from the projected context and mutation metadata. Pure: no I/O, no fs reads.
import type { SessionEntry } from "../../log/entries.ts";
import { backwardLookup, type ProjectedEntry } from "../../projection/project.ts";
import {
  ambiguousCallIds,
  argsObject,
  isTextOnly,
  pairCalls,
  pathArgument,
  textBlocks,
  toolCallsOf,
  toolResultOf,
  type PairedCall,
} from "./conversation.ts";
import { displayPath } from "./paths.ts";

/** How much of a file one read output shows. `uncertain`: the output is there but its extent is unknown. */
export type ReadCompleteness = "full" | "partial" | "uncertain";

/** Cumulative file paths (display form, sorted). `read` excludes paths that were also modified. */
export interface FileLists {
  read: string[];
  modified: string[];
}

const READ_TOOLS = new Set(["read"]);
const MUTATING_TOOLS = new Set(["write", "edit"]);

/** A continuation notice Pi (current and older versions) appends when a read stopped before the end. */
// The notice is matched from its first " exceeds " on: a later one could only find the same " limit" after it, and
// trying every one on a long last line would be quadratic.
const CONTINUATION =
  /Use offset=\d+ to continue|more lines (in file|not shown)|^\[Line \d+ is (?:(?! exceeds ).)* exceeds .* limit/;

/**
 * Classify a successful text read. Offset and limit alone do not make a read partial: Pi reports any
 * unread remainder with a continuation notice, so a limit past the end with no notice read everything.
 * A start after line 1, truncation metadata, or a notice on the last line means partial.
 */
export function classifyRead(args: unknown, text: string, details: unknown, replaced: boolean): ReadCompleteness {
  if (replaced) return "uncertain";
  const truncation = (details as { truncation?: { truncated?: unknown; firstLineExceedsLimit?: unknown } } | undefined)
    ?.truncation;
  if (truncation?.truncated === true || truncation?.firstLineExceedsLimit === true) return "partial";
  const lines = text.trimEnd().split("\n");
  const last = lines[lines.length - 1] ?? "";
  if (CONTINUATION.test(last)) return "partial";
  const offset = argsObject(args)?.offset;
  if (typeof offset === "number" && offset > 1) return "partial";
  if (offset !== undefined && typeof offset !== "number") return "uncertain";
  return "full";
}

function sortedUnique(paths: Iterable<string>): string[] {
  return [...new Set(paths)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Merge file lists; a path modified anywhere leaves the read list. */
export function mergeFileLists(...lists: readonly Partial<FileLists>[]): FileLists {
  const modified = new Set<string>();
  const read = new Set<string>();
  for (const list of lists) {
    for (const path of list.modified ?? []) if (typeof path === "string") modified.add(path);
    for (const path of list.read ?? []) if (typeof path === "string") read.add(path);
  }
  return { read: sortedUnique([...read].filter((path) => !modified.has(path))), modified: sortedUnique(modified) };
}

/**
 * File operations of the calls made in a span, nested calls included: a codemode script's reads and writes are
 * recorded on its result (`nestedCalls`), as Pi's own file lists count them. Failed calls read or changed nothing,
 * so they are left out; a nested call is judged by its own status, since a script that failed later still ran it.
 */
export function spanFileOps(calls: readonly PairedCall[], cwd: string): FileLists {
  const read: string[] = [];
  const modified: string[] = [];
  const add = (name: string, args: unknown) => {
    const path = pathArgument(args);
    if (!path) return;
    if (READ_TOOLS.has(name)) read.push(displayPath(path, cwd));
    else if (MUTATING_TOOLS.has(name)) modified.push(displayPath(path, cwd));
  };
  for (const paired of calls) {
    const nested = (paired.result?.view.nestedCalls as { calls?: unknown } | undefined)?.calls;
    if (Array.isArray(nested)) {
      for (const record of nested as { name?: unknown; arguments?: unknown; status?: unknown }[]) {
        if (typeof record?.name === "string" && record.status !== "error") add(record.name, record.arguments);
      }
    }
    if (paired.result?.view.isError) continue;
    add(paired.call.name, paired.call.arguments);
  }
  return mergeFileLists({ read, modified });
}

/** One observation about a path in the tail. `step` is the branch index of the assistant turn. */
interface Observation {
  step: number;
  kind: "read" | "write";
  completeness: ReadCompleteness;
}

/** Per path: visible snapshots and mutation steps. */
interface PathEvidence {
  snapshots: Observation[];
  mutations: { step: number; tool: string }[];
}

/** What the retained startup reads say about a path. */
export interface StartupEvidence {
  completeness: ReadCompleteness;
  /** Branch index of the read's result. */
  index: number;
}

/** Everything annotation needs. Indices are positions on the raw branch. */
export interface EvidenceInput {
  branch: readonly SessionEntry[];
  /** Projected entries; the tail is `entries[tailStart..]`. */
  entries: readonly ProjectedEntry[];
  tailStart: number;
  /** Branch index of the first kept entry. */
  rawTailStart: number;
  /** Targets of context edits that replace content (omissions never reach the projection). */
  replaced: ReadonlySet<string>;
  cwd: string;
  lists: FileLists;
  startup: ReadonlyMap<string, StartupEvidence>;
  /** Call ids ambiguous anywhere on the branch (`ambiguousCallIds`); computed from `branch` when absent. */
  ambiguous?: ReadonlySet<string>;
}

function evidenceFor(map: Map<string, PathEvidence>, path: string): PathEvidence {
  let evidence = map.get(path);
  if (!evidence) {
    evidence = { snapshots: [], mutations: [] };
    map.set(path, evidence);
  }
  return evidence;
}

/** Paths the raw branch records as mutated, with the step of each mutation (tool calls and nested calls). */
function collectMutations(
  branch: readonly SessionEntry[],
  from: number,
  cwd: string,
  add: (path: string, step: number, tool: string) => void,
): void {
  const failed = new Set<string>();
  const callStep = new Map<string, number>();
  for (let i = from; i < branch.length; i++) {
    const entry = branch[i];
    if (entry.type !== "message") continue;
    const result = toolResultOf(entry.message);
    if (result?.isError) failed.add(result.toolCallId);
  }
  for (let i = from; i < branch.length; i++) {
    const entry = branch[i];
    if (entry.type !== "message") continue;
    for (const call of toolCallsOf(entry.message)) {
      callStep.set(call.id, i);
      if (!MUTATING_TOOLS.has(call.name) || failed.has(call.id)) continue;
      const path = pathArgument(call.arguments);
      if (path) add(displayPath(path, cwd), i, call.name);
    }
    const result = toolResultOf(entry.message);
    const nested = (result?.nestedCalls as { calls?: unknown } | undefined)?.calls;
    if (!result || !Array.isArray(nested)) continue;
    // Nested calls run while their parent tool runs, so they count at the parent's step.
    const step = callStep.get(result.toolCallId) ?? i;
    for (const record of nested as { name?: unknown; arguments?: unknown; status?: unknown }[]) {
      if (typeof record?.name !== "string" || !MUTATING_TOOLS.has(record.name) || record.status === "error") continue;
      const path = pathArgument(record.arguments);
      if (path) add(displayPath(path, cwd), step, record.name);
    }
  }
}

/** Collect tail evidence per path. */
function tailEvidence(input: EvidenceInput): Map<string, PathEvidence> {
  const byPath = new Map<string, PathEvidence>();
  // From the end: the tail is there, and indexing the whole branch at every compaction grew with its square.
  const { indexOf: stepOf } = backwardLookup(input.branch);
  const ambiguous = input.ambiguous ?? ambiguousCallIds(input.branch);
  for (const paired of pairCalls(input.entries, input.tailStart)) {
    if (ambiguous.has(paired.call.id)) continue;
    const name = paired.call.name;
    if (!READ_TOOLS.has(name) && name !== "write") continue;
    const path = pathArgument(paired.call.arguments);
    const result = paired.result;
    if (!path || !result || paired.ambiguous || result.view.isError) continue;
    // A replaced call no longer shows its arguments, so the pairing is not trustworthy.
    if (input.replaced.has(paired.entryId)) continue;
    const step = stepOf(paired.entryId);
    if (name === "write") {
      const content = argsObject(paired.call.arguments)?.content;
      if (typeof content === "string")
        evidenceFor(byPath, displayPath(path, input.cwd)).snapshots.push({ step, kind: "write", completeness: "full" });
      continue;
    }
    if (!isTextOnly(result.view.content)) continue;
    const text = textBlocks(result.view.content).join("\n");
    const completeness = classifyRead(
      paired.call.arguments,
      text,
      result.view.details,
      input.replaced.has(result.entryId),
    );
    evidenceFor(byPath, displayPath(path, input.cwd)).snapshots.push({ step, kind: "read", completeness });
  }
  collectMutations(input.branch, input.rawTailStart, input.cwd, (path, step, tool) =>
    evidenceFor(byPath, path).mutations.push({ step, tool }),
  );
  return byPath;
}

/** A tail label and whether it is positive (the tail shows current contents as of this checkpoint). */
interface TailLabel {
  text: string;
  positive: boolean;
}

/** Decide the tail label of one path. */
function tailLabel(evidence: PathEvidence | undefined): TailLabel | undefined {
  if (!evidence || evidence.snapshots.length === 0) return undefined;
  const lastMutation = evidence.mutations.reduce((max, m) => Math.max(max, m.step), -1);
  const atLast = evidence.mutations.filter((m) => m.step === lastMutation);
  const cleanReads = evidence.snapshots.filter((s) => s.kind === "read" && s.step > lastMutation);
  // A write is itself the last mutation; its payload is the file only if nothing else changed it in that step.
  const cleanWrite =
    atLast.length === 1 &&
    atLast[0].tool === "write" &&
    evidence.snapshots.some((s) => s.kind === "write" && s.step === lastMutation);
  if (cleanReads.some((s) => s.completeness === "full")) return { text: "full read in tail", positive: true };
  if (cleanWrite) return { text: "write content in tail", positive: true };
  if (cleanReads.some((s) => s.completeness === "uncertain")) return { text: "read output in tail", positive: true };
  if (cleanReads.length > 0) return { text: "partial read in tail", positive: true };
  const siblings = evidence.snapshots.filter((s) => s.step === lastMutation);
  if (siblings.length > 0) {
    const write = siblings.some((s) => s.kind === "write");
    return { text: write ? "write in tail; order uncertain" : "read in tail; order uncertain", positive: false };
  }
  const earlier = evidence.snapshots.filter((s) => s.step < lastMutation);
  if (earlier.length > 0) {
    const latest = earlier.reduce((a, b) => (b.step >= a.step ? b : a));
    return {
      text: latest.kind === "write" ? "write content in tail, then edited" : "read in tail, then edited",
      positive: false,
    };
  }
  return undefined;
}

function startupLabel(startup: StartupEvidence, editedAfter: boolean): string {
  const kind =
    startup.completeness === "full"
      ? "startup read retained"
      : startup.completeness === "partial"
        ? "partial startup read retained"
        : "startup read output retained";
  return editedAfter ? `${kind}, then edited` : kind;
}

/** One file-list line. */
export interface FileLine {
  path: string;
  annotation?: string;
}

/** Annotate the cumulative lists. Labels are recomputed at every checkpoint and never persisted. */
export function annotateFiles(input: EvidenceInput): { read: FileLine[]; modified: FileLine[] } {
  const tail = tailEvidence(input);
  // Mutations anywhere on the branch decide whether a startup read is still current.
  const mutatedAt = new Map<string, number[]>();
  if (input.startup.size > 0) {
    collectMutations(input.branch, 0, input.cwd, (path, step) => {
      if (!input.startup.has(path)) return;
      const list = mutatedAt.get(path) ?? [];
      list.push(step);
      mutatedAt.set(path, list);
    });
  }
  const annotate = (path: string, modified: boolean): FileLine => {
    const label = tailLabel(tail.get(path));
    if (label?.positive) return { path, annotation: label.text };
    const startup = input.startup.get(path);
    if (startup) {
      const editedAfter = (mutatedAt.get(path) ?? []).some((step) => step > startup.index);
      return { path, annotation: startupLabel(startup, editedAfter) };
    }
    if (label) return { path, annotation: label.text };
    return modified ? { path, annotation: "no read-tool output in tail" } : { path };
  };
  return {
    read: input.lists.read.map((path) => annotate(path, false)),
    modified: input.lists.modified.map((path) => annotate(path, true)),
  };
}
