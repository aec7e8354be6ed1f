// Selects the startup reads a checkpoint keeps verbatim: successful text reads between the first and second
// user messages whose path the project instructions name literally. Pure: lexical matching only, no I/O.
import { posix } from "node:path";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntry, SessionEntry } from "../../log/entries.ts";
import type { ContextFile } from "../contract.ts";
import {
  ambiguousCallIds,
  argsObject,
  isTextOnly,
  type PairedCall,
  pairCalls,
  pathArgument,
  rawEntries,
  roleOf,
  textBlocks,
  toolCallsOf,
  toolResultOf,
} from "./conversation.ts";
import { classifyRead, type ReadCompleteness } from "./file-evidence.ts";
import { absolutePath, baseName, displayPath } from "./paths.ts";
import { PrefixFold } from "./branch-fold.ts";

/** A selected read, by reference: its text stays in the session and is copied out at render time. */
export interface StartupReadRef {
  /** The toolResult entry holding the output. */
  entryId: string;
  /** The assistant entry holding the call. */
  callEntryId: string;
  toolCallId: string;
  /** Display path (relative to cwd where possible). */
  path: string;
  offset?: number;
  limit?: number;
  completeness: ReadCompleteness;
}

/** Selection state stored in checkpoint details. `closed` once the second user message exists. */
export interface StartupReadState {
  closed: boolean;
  reads: StartupReadRef[];
}

/** Everything selection looks at. */
export interface StartupScanInput {
  branch: readonly SessionEntry[];
  cwd: string;
  contextFiles: readonly { path: string; content: string }[];
  systemPrompt?: string;
  edits: ReadonlyMap<string, ContextEditEntry>;
}

const INSTRUCTION_FILE = /^(AGENTS|AGENTS\.override|CLAUDE)\.md$/i;

/** True for AGENTS.md, AGENTS.override.md and CLAUDE.md (any case), the files Pi loads as instructions. */
export function isInstructionFile(path: string): boolean {
  return INSTRUCTION_FILE.test(baseName(path));
}

/** Project-instruction blocks of a rendered system prompt, the fallback when no context files are supplied. */
export function instructionBlocks(systemPrompt: string): ContextFile[] {
  const blocks: ContextFile[] = [];
  // Each block runs from its opening tag to the first closing tag after it. The closing tag is found with indexOf,
  // not a lazy regex: with openers and no closer, a lazy match would rescan the rest of the prompt per opener.
  const opener = /<project_instructions path="([^"]*)">\n/g;
  const closer = "\n</project_instructions>";
  for (let match = opener.exec(systemPrompt); match; match = opener.exec(systemPrompt)) {
    const start = match.index + match[0].length;
    const end = systemPrompt.indexOf(closer, start);
    // No closer after this opener means none after any later one either.
    if (end === -1) break;
    blocks.push({ path: match[1], content: systemPrompt.slice(start, end) });
    opener.lastIndex = end + closer.length;
  }
  return blocks;
}

const PATH_CHAR = /[A-Za-z0-9_\-./\\~]/;
const TRAILING_PATH_CHAR = /[A-Za-z0-9_\-/\\]/;

/**
 * True when `candidate` occurs in `text` as a whole path, not inside a longer path or file name:
 * `README.md` matches "see README.md." but not "docs/README.md" or "README.md.bak".
 */
export function mentions(text: string, candidate: string): boolean {
  if (candidate === "" || candidate === "." || candidate === "/") return false;
  for (let at = text.indexOf(candidate); at >= 0; at = text.indexOf(candidate, at + 1)) {
    const before = at === 0 ? "" : text[at - 1];
    if (before && PATH_CHAR.test(before)) continue;
    const end = at + candidate.length;
    const after = text[end] ?? "";
    if (after && TRAILING_PATH_CHAR.test(after)) continue;
    if (after === "." && /[A-Za-z0-9_]/.test(text[end + 1] ?? "")) continue;
    return true;
  }
  return false;
}

/** The spellings under which an instruction file may name the file at `absolute`. */
function candidates(absolute: string, cwd: string, instructionPath: string): string[] {
  const out = new Set<string>([absolute, baseName(absolute)]);
  const relative = displayPath(absolute, cwd);
  if (!relative.startsWith("/")) out.add(relative).add(`./${relative}`);
  const instructionDir = absolutePath(instructionPath, cwd).replace(/\/[^/]*$/, "") || "/";
  // Relative to the instruction file's own folder, climbing out of it where needed: an instruction file in a
  // subfolder names a sibling folder's file as `../docs/guide.md`.
  const fromInstruction = posix.relative(instructionDir, absolute);
  if (fromInstruction !== "" && !fromInstruction.startsWith("/")) {
    out.add(fromInstruction);
    if (!fromInstruction.startsWith("../")) out.add(`./${fromInstruction}`);
  }
  return [...out];
}

function isUser(entry: SessionEntry): boolean {
  return entry.type === "message" && roleOf(entry.message) === "user";
}

/** A successful, text-only read inside the interval, paired in its own turn; its text and reference are made on demand. */
interface IntervalRead {
  paired: PairedCall;
  absolute: string;
  index: number;
}

/**
 * The interval's reads. Only what every read needs for the selection is computed here (its path): a long first task
 * has thousands of reads, the interval is scanned again at every compaction while it is open, and only the few an
 * instruction file names need their text and reference.
 */
function intervalReads(input: StartupScanInput, from: number, to: number): IntervalRead[] {
  const reads: IntervalRead[] = [];
  // Only top-level `read` calls count: nested calls inside a script and shell commands that print files are
  // not reads the model saw as file contents.
  for (const paired of pairCalls(rawEntries(input.branch.slice(from, to)))) {
    if (paired.call.name !== "read" || !paired.result || paired.ambiguous) continue;
    const { view: result, entryId: resultId } = paired.result;
    if (result.isError || !isTextOnly(result.content)) continue;
    // Omitted or replaced call/output: what the model saw is not the file, so nothing is retained.
    if (input.edits.has(resultId) || input.edits.has(paired.entryId)) continue;
    const path = pathArgument(paired.call.arguments);
    if (path) reads.push({ paired, absolute: absolutePath(path, input.cwd), index: from + paired.result.at });
  }
  return reads;
}

const MAY_NAME_INSTRUCTIONS = /agents|claude/i;

/**
 * What a scan needs to know about the whole branch, kept as the branch grows. Found by the entries ({@link PrefixFold}):
 * a compaction hands the checkpoint planner a fresh copy of the branch each time, a digest the live one.
 */
interface StartupIndex {
  /** Indexes of the first two user messages. */
  users: number[];
  /**
   * Indexes of the entries with a `read` call whose path, as written, may name an instruction file: the name is in
   * the path as written (normalizing only removes), so the entries that can read one are found without normalizing.
   */
  mayReadInstructions: number[];
}

const startupIndex = new PrefixFold<StartupIndex>(
  () => ({ users: [], mayReadInstructions: [] }),
  (index, entry, i) => {
    if (isUser(entry) && index.users.length < 2) index.users.push(i);
    if (entry.type !== "message") return;
    for (const call of toolCallsOf(entry.message as AgentMessage)) {
      const path = call.name === "read" ? pathArgument(call.arguments) : undefined;
      if (path && MAY_NAME_INSTRUCTIONS.test(path)) {
        index.mayReadInstructions.push(i);
        return;
      }
    }
  },
);

/** Whether a `read` call in branch[from, to) names an instruction file. */
function readsInstructionFile(input: StartupScanInput, index: StartupIndex, from: number, to: number): boolean {
  for (const i of index.mayReadInstructions) {
    if (i < from || i >= to) continue;
    const entry = input.branch[i] as SessionEntry & { type: "message" };
    for (const call of toolCallsOf(entry.message as AgentMessage)) {
      const path = call.name === "read" ? pathArgument(call.arguments) : undefined;
      if (path && isInstructionFile(absolutePath(path, input.cwd))) return true;
    }
  }
  return false;
}

/** Whether every tool result in branch[from, to) answers a call made in that span (so pairing the span pairs them all). */
function answersOwnCalls(branch: readonly SessionEntry[], from: number, to: number): boolean {
  const calls = new Set<string>();
  for (let i = from; i < to; i++) {
    const entry = branch[i];
    if (entry.type !== "message") continue;
    for (const call of toolCallsOf(entry.message as AgentMessage)) calls.add(call.id);
    const result = toolResultOf(entry.message as AgentMessage);
    if (result && !calls.has(result.toolCallId)) return false;
  }
  return true;
}

function readText(read: IntervalRead): string {
  return textBlocks(read.paired.result!.view.content).join("\n");
}

function readRef(read: IntervalRead, cwd: string): StartupReadRef {
  const { paired } = read;
  const args = argsObject(paired.call.arguments);
  const offset = typeof args?.offset === "number" ? args.offset : undefined;
  const limit = typeof args?.limit === "number" ? args.limit : undefined;
  return {
    entryId: paired.result!.entryId,
    callEntryId: paired.entryId,
    toolCallId: paired.call.id,
    path: displayPath(pathArgument(paired.call.arguments)!, cwd),
    ...(offset !== undefined ? { offset } : {}),
    ...(limit !== undefined ? { limit } : {}),
    completeness: classifyRead(paired.call.arguments, readText(read), paired.result!.view.details, false),
  };
}

/**
 * Scan the startup interval (first user message up to the second, or to the leaf while no second exists)
 * and select reads named by the instruction files. Instruction files the agent itself read in the interval
 * count as instruction sources; when Pi did not load them as context files they are retained as well.
 * With `within`, only the reads whose entries lie in branch[from, to) are selected: the same selection among
 * them as the whole scan's, at the cost of those entries (and of the interval when the agent read an instruction
 * file itself).
 */
export function scanStartupReads(input: StartupScanInput, within?: { from: number; to: number }): StartupReadState {
  const index = startupIndex.of(input.branch);
  const [first, second] = index.users;
  if (first === undefined) return { closed: false, reads: [] };
  const end = second ?? input.branch.length;
  const closed = second !== undefined;
  let sources: ContextFile[] = input.contextFiles.map((file) => ({ path: file.path, content: file.content }));
  if (sources.length === 0 && input.systemPrompt) sources = instructionBlocks(input.systemPrompt);
  // Without instructions from Pi, only an instruction file read in the interval can select anything: one look at the
  // calls settles the common case without pairing the interval, which digest asks about at every digest.
  const readInstruction = readsInstructionFile(input, index, first + 1, end);
  if (sources.length === 0 && !readInstruction) return { closed, reads: [] };
  // The reads of branch[within] alone, unless an instruction file read anywhere in the interval is a source for them
  // or a result there answers a call before it: then the whole interval is read, as without `within`.
  let from = first + 1;
  let to = end;
  if (within && !readInstruction) {
    const start = Math.max(from, within.from);
    const stop = Math.min(to, within.to);
    if (answersOwnCalls(input.branch, start, stop)) [from, to] = [start, stop];
  }
  const reads = from < to ? intervalReads(input, from, to) : [];
  // A call id reused anywhere on the branch makes the pairing doubtful. Found for the branch once, and only when a
  // read could be selected.
  let ambiguous: Set<string> | undefined;
  const unambiguous = (read: IntervalRead) => !(ambiguous ??= ambiguousCallIds(input.branch)).has(read.paired.call.id);
  const loaded = new Set(input.contextFiles.map((file) => absolutePath(file.path, input.cwd)));
  const readInstructions = reads.filter(
    (read) => isInstructionFile(read.absolute) && !loaded.has(read.absolute) && unambiguous(read),
  );
  sources = [...sources, ...readInstructions.map((read) => ({ path: read.absolute, content: readText(read) }))];
  if (sources.length === 0) return { closed, reads: [] };
  const selected = reads.filter(
    (read) =>
      readInstructions.includes(read) ||
      (sources.some((source) =>
        candidates(read.absolute, input.cwd, source.path).some((candidate) => mentions(source.content, candidate)),
      ) &&
        unambiguous(read)),
  );
  return { closed, reads: selected.sort((a, b) => a.index - b.index).map((read) => readRef(read, input.cwd)) };
}

/**
 * The selection for this checkpoint. A closed selection is carried forward unchanged; an open one is
 * rescanned and merged, so reads only ever join it.
 */
export function selectStartupReads(previous: StartupReadState | undefined, input: StartupScanInput): StartupReadState {
  if (previous?.closed) return previous;
  const scanned = scanStartupReads(input);
  if (!previous) return scanned;
  const byId = new Map<string, StartupReadRef>();
  for (const read of [...previous.reads, ...scanned.reads]) if (!byId.has(read.entryId)) byId.set(read.entryId, read);
  // Nothing to order: the branch's positions are looked up only for two reads or more (an open interval is a whole
  // long task, met again at every compaction).
  if (byId.size < 2) return { closed: scanned.closed, reads: [...byId.values()] };
  const position = new Map<string, number>();
  input.branch.forEach((entry, i) => position.set(entry.id, i));
  const reads = [...byId.values()].sort(
    (a, b) =>
      (position.get(a.entryId) ?? Number.MAX_SAFE_INTEGER) - (position.get(b.entryId) ?? Number.MAX_SAFE_INTEGER),
  );
  return { closed: scanned.closed, reads };
}

/** Validate a stored selection (details come from disk and may be from another version). */
export function readStoredState(value: unknown): StartupReadState | undefined {
  const state = value as Partial<StartupReadState> | undefined;
  if (!state || typeof state.closed !== "boolean" || !Array.isArray(state.reads)) return undefined;
  const reads = state.reads.filter(
    (read): read is StartupReadRef => !!read && typeof read.entryId === "string" && typeof read.path === "string",
  );
  return { closed: state.closed, reads };
}
