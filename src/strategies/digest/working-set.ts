// The working set at a step boundary: which files the agent touched in its recent steps, and how far back the raw
// tail must reach so the newest read (or write) of each of them stays raw. A digest's range is contiguous, so
// keeping such a read means keeping every step after it; the cap bounds what that costs. Pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { pathArgument, toolCallsOf, toolResultOf } from "../checkpoint/conversation.ts";
import { absolutePath } from "../checkpoint/paths.ts";

/** Tools whose path argument names a file the agent is working on. */
const FILE_TOOLS = new Set(["read", "edit", "write"]);

/** One step as the tail split sees it: its size, the files it touched, the files whose text it holds. */
export interface WorkStep {
  tokens: number;
  /** Absolute paths of files read, edited or written by the step's calls. */
  touched: readonly string[];
  /** Absolute paths whose text the step holds: a successful read's output, or a write's content. */
  sources: readonly string[];
}

/** How far back the tail reaches for the working set. */
export interface TailRule {
  /** Newest raw tokens always kept (in whole steps). */
  keepRaw: number;
  /** Most raw tokens the tail may hold to keep the working set; at or below `keepRaw` the tail is `keepRaw` alone. */
  maxRaw: number;
  /** A file is in the working set when the current step or one of this many newest steps touched it. */
  hotSteps: number;
}

/** Files touched and files whose text is held by one step's messages (an assistant turn and its results). */
export function stepFiles(messages: readonly AgentMessage[], cwd: string): { touched: string[]; sources: string[] } {
  const calls = new Map<string, { name: string; path: string; content: boolean }>();
  const touched = new Set<string>();
  const sources = new Set<string>();
  for (const message of messages) {
    for (const call of toolCallsOf(message)) {
      const path = FILE_TOOLS.has(call.name) ? pathArgument(call.arguments) : undefined;
      if (!path) continue;
      const key = absolutePath(path, cwd);
      touched.add(key);
      calls.set(call.id, { name: call.name, path: key, content: call.name === "write" });
    }
    const result = toolResultOf(message);
    const call = result ? calls.get(result.toolCallId) : undefined;
    if (!call || result!.isError) continue;
    // A read's output is the file's text; a write's arguments are (its result only confirms it).
    if (call.name === "read" || call.content) sources.add(call.path);
  }
  return { touched: [...touched], sources: [...sources] };
}

/**
 * Index of the first step to keep raw. The newest steps up to `keepRaw` always stay. Beyond them the tail reaches
 * back to the newest source of every file in the working set, as far as `maxRaw` allows: when not all fit, the
 * oldest go first, and the tail never keeps steps older than the oldest source it keeps.
 */
export function tailStart(steps: readonly WorkStep[], current: readonly string[], rule: TailRule): number {
  let cut = steps.length;
  let kept = 0;
  while (cut > 0 && kept < rule.keepRaw) kept += steps[--cut].tokens;
  if (rule.maxRaw <= kept || cut === 0) return cut;
  const hot = new Set(current);
  for (let k = Math.max(0, steps.length - rule.hotSteps); k < steps.length; k++)
    for (const path of steps[k].touched) hot.add(path);
  // Walking back from the newest step: the newest source of each hot file, while the tail stays within the cap.
  let start = cut;
  let tokens = 0;
  for (let k = steps.length - 1; k >= 0 && hot.size; k--) {
    tokens += steps[k].tokens;
    if (tokens > rule.maxRaw) break;
    let source = false;
    for (const path of steps[k].sources) if (hot.delete(path)) source = true;
    if (source && k < start) start = k;
  }
  return start;
}
