// Superseded tool output: a read of a file that was later read again or rewritten, and an output identical to an
// earlier one. A digest shows such outputs as a reference only. Pure: reads the branch, never the filesystem.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../../log/entries.ts";
import { argsObject, pathArgument, textBlocks, toolCallsOf, toolResultOf } from "../checkpoint/conversation.ts";
import { absolutePath } from "../checkpoint/paths.ts";

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

/** Every tool result on `branch[0..end]` with the call it answers (calls matched by id, first call wins). */
function resultsOf(branch: readonly SessionEntry[], end: number): ResultInfo[] {
  const calls = new Map<string, CallInfo>();
  const out: ResultInfo[] = [];
  for (let i = 0; i <= end && i < branch.length; i++) {
    const entry = branch[i];
    if (entry.type !== "message") continue;
    for (const call of toolCallsOf(entry.message))
      if (!calls.has(call.id)) calls.set(call.id, { name: call.name, args: call.arguments });
    const result = toolResultOf(entry.message);
    if (result) out.push({ entryId: entry.id, call: calls.get(result.toolCallId), message: entry.message });
  }
  return out;
}

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
  const results = resultsOf(branch, end);
  const out = new Map<string, Superseded>();
  // Backwards: the nearest later whole read, same-range read or write of each path.
  const laterWhole = new Map<string, string>();
  const laterRange = new Map<string, string>();
  const laterWrite = new Map<string, string>();
  for (let k = results.length - 1; k >= 0; k--) {
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
  // Forwards: the first occurrence of each output text (reads are handled above and never point at each other).
  const first = new Map<string, string>();
  for (const { entryId, call, message } of results) {
    if (call?.name === "read") continue;
    const text = textBlocks(toolResultOf(message)?.content).join("\n");
    if (text.length < MIN_SHARED_OUTPUT) continue;
    const earlier = first.get(text);
    if (earlier === undefined) first.set(text, entryId);
    else if (targets.has(entryId) && !out.has(entryId)) out.set(entryId, { sameAs: earlier });
  }
  return out;
}
