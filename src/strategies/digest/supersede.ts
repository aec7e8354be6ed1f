// Superseded tool output: a read of a file that was later read again or rewritten, and an output identical to an
// earlier one. A digest shows such outputs as a reference only. Pure: reads the branch, never the filesystem.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { argsObject, pathArgument, textBlocks, toolCallsOf, toolResultOf } from "../shared/conversation.ts";
import { absolutePath } from "../shared/paths.ts";
import { BranchFold } from "../shared/branch-fold.ts";

/** Outputs shorter than this are cheaper to show than to reference. */
const MIN_SHARED_OUTPUT = 80;

/** Why an output is not shown, with the entry that makes it redundant. */
export interface Superseded {
  /** The read of the same file (or its rewrite) that came later. */
  by?: string;
  /** An earlier, byte-identical output. */
  sameAs?: string;
}

interface CallInfo {
  name: string;
  args: unknown;
}

interface ResultInfo {
  entryId: string;
  call: CallInfo | undefined;
  message: AgentMessage;
}

function rangeKey(args: unknown): string {
  const object = argsObject(args);
  const offset = object?.offset;
  const limit = object?.limit;
  return offset === undefined && limit === undefined
    ? ""
    : `${JSON.stringify(offset ?? null)}:${JSON.stringify(limit ?? null)}`;
}

/** The tool results of a branch with the calls they answer, and where each distinct long output first appeared. */
interface ResultIndex {
  /** The first call of each id so far (a result answers the first call of its id before it). */
  calls: Map<string, CallInfo>;
  results: (ResultInfo & { at: number })[];
  /** Position in `results` of each entry id's first result. */
  firstResult: Map<string, number>;
  /** Outputs of at least {@link MIN_SHARED_OUTPUT} characters not answering a read, by a hash of their text: the
   * position in `results` of the first result of each distinct text (a hash keeps the index far below the texts). */
  firstOutput: Map<number, number[]>;
}

/** The text an output shows, as the duplicate check compares it. */
function outputText(message: AgentMessage): string {
  return textBlocks(toolResultOf(message)?.content).join("\n");
}

/** FNV-1a over the UTF-16 code units: equal texts hash alike, and a bucket is checked by comparing the texts. */
function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** The first earlier result (position in `results`) whose output is `text`, if any. */
function firstWithText(index: ResultIndex, text: string, hash = hashText(text)): number | undefined {
  for (const k of index.firstOutput.get(hash) ?? []) if (outputText(index.results[k].message) === text) return k;
  return undefined;
}

/** Every tool result on the branch with the call it answers (calls matched by id, first call wins), per branch array. */
const resultIndex = new BranchFold<ResultIndex>(
  () => ({ calls: new Map(), results: [], firstResult: new Map(), firstOutput: new Map() }),
  (index, entry, at) => {
    if (entry.type !== "message") return;
    for (const call of toolCallsOf(entry.message))
      if (!index.calls.has(call.id)) index.calls.set(call.id, { name: call.name, args: call.arguments });
    const result = toolResultOf(entry.message);
    if (!result) return;
    const info = { entryId: entry.id, call: index.calls.get(result.toolCallId), message: entry.message, at };
    const k = index.results.push(info) - 1;
    if (!index.firstResult.has(entry.id)) index.firstResult.set(entry.id, k);
    if (info.call?.name === "read") return;
    const text = outputText(entry.message);
    if (text.length < MIN_SHARED_OUTPUT) return;
    const hash = hashText(text);
    if (firstWithText(index, text, hash) !== undefined) return;
    const bucket = index.firstOutput.get(hash);
    if (bucket) bucket.push(k);
    else index.firstOutput.set(hash, [k]);
  },
);

/**
 * Which of the results in `targets` are redundant, judged against the whole branch up to `end` (everything the model
 * will go on seeing, raw or digested). A read is superseded by a later successful read of the same file (whole, or
 * the same offset and limit) or a later successful write of it; an edit does not supersede a read, since most of the
 * file is unchanged. With `edits` (a digest that quotes what edits wrote), an edit is itself superseded by a later
 * whole read or write of its file, which shows the file as it is after it. Any other output is redundant when an
 * earlier output was byte-identical. Paths compare resolved against `cwd`.
 */
export function findSuperseded(
  branch: readonly SessionEntry[],
  end: number,
  targets: ReadonlySet<string>,
  cwd: string,
  edits = false,
): Map<string, Superseded> {
  const index = resultIndex.of(branch);
  const results = index.results;
  const out = new Map<string, Superseded>();
  // Only results at or after the first target can be one, and only later ones supersede: the older part of the
  // branch is not looked at, so the work follows the span digested and what came after it.
  let from = results.length;
  for (const id of targets) from = Math.min(from, index.firstResult.get(id) ?? results.length);
  let to = results.length - 1;
  while (to >= 0 && results[to].at > end) to--;
  // Backwards: the nearest later whole read, same-range read or write of each path.
  const laterWhole = new Map<string, string>();
  const laterRange = new Map<string, string>();
  const laterWrite = new Map<string, string>();
  for (let k = to; k >= from; k--) {
    const { entryId, call, message } = results[k];
    const path = call ? pathArgument(call.args) : undefined;
    const failed = toolResultOf(message)?.isError === true;
    if (!call || !path || failed) continue;
    const key = absolutePath(path, cwd);
    if (call.name === "read") {
      const range = rangeKey(call.args);
      if (targets.has(entryId)) {
        const by =
          laterWrite.get(key) ?? laterWhole.get(key) ?? (range ? laterRange.get(`${key}\u0000${range}`) : undefined);
        if (by) out.set(entryId, { by });
      }
      if (range) laterRange.set(`${key}\u0000${range}`, entryId);
      else laterWhole.set(key, entryId);
    } else if (call.name === "write") laterWrite.set(key, entryId);
    else if (edits && call.name === "edit" && targets.has(entryId)) {
      // A later whole read or rewrite shows the file as it is after this edit: the edit's own texts are then stale.
      const by = laterWrite.get(key) ?? laterWhole.get(key);
      if (by) out.set(entryId, { by });
    }
  }
  // Forwards: an output identical to the first one with its text (reads are handled above and never point at each other).
  for (let k = from; k <= to; k++) {
    const { entryId, call, message } = results[k];
    if (call?.name === "read" || !targets.has(entryId) || out.has(entryId)) continue;
    const text = outputText(message);
    if (text.length < MIN_SHARED_OUTPUT) continue;
    const first = firstWithText(index, text);
    if (first !== undefined && first < k) out.set(entryId, { sameAs: results[first].entryId });
  }
  return out;
}
