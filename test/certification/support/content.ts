// Deterministic project content and script pieces for certification cases, sized in the provider's own unit
// (4 characters per token), and the routes that tell the package's own model calls apart from the agent's.
import type { JsonObject } from "@earendil-works/pi-ai";
import { continuationAsk, DELTA_ONLY_SYSTEM } from "../../../src/strategies/preserve/prompt.ts";
import { PLANNER_SYSTEM } from "../../../src/strategies/planned/model-plan.ts";
import { piCompaction } from "../../../src/lab/pi-internals.ts";
import { messageText, type RecordedRequest, type ScriptReply, type ScriptRoute } from "../../e2e/fixtures/script.ts";

/** A text file of about `tokens` tokens: numbered lines, each carrying `marker`, so it is easy to find again. */
export function textFile(marker: string, tokens: number): string {
  const lines: string[] = [];
  for (let i = 1, size = 0; size < tokens * 4; i++) {
    const line = `${marker} line ${String(i).padStart(4, "0")}: the quick brown fox jumps over the lazy dog again`;
    lines.push(line);
    size += line.length + 1;
  }
  return `${lines.join("\n")}\n`;
}

/** A reply that calls one tool. */
export const call = (name: string, args: JsonObject, id?: string): ScriptReply => ({
  toolCalls: [{ name, arguments: args, ...(id ? { id } : {}) }],
});
export const read = (path: string, id?: string): ScriptReply => call("read", { path }, id);
export const say = (text: string): ScriptReply => ({ text });

const firstLine = (text: string) => text.split("\n")[0];

/** Pi's own compaction summary requests (native strategy, fallbacks). */
export async function nativeSummaryRoute(replies: ScriptReply[]): Promise<ScriptRoute> {
  const { SUMMARIZATION_SYSTEM_PROMPT } = await piCompaction();
  return { name: "native-summary", match: { system: firstLine(SUMMARIZATION_SYSTEM_PROMPT) }, replies };
}

/** The `planned` strategy's model planner. */
export const plannerRoute = (replies: ScriptReply[]): ScriptRoute => ({
  name: "planner",
  match: { system: firstLine(PLANNER_SYSTEM) },
  replies,
});

/** The `context_lookup` subagent: the only requests that offer a bare `show_entry` tool. */
export const lookupRoute = (replies: ScriptReply[]): ScriptRoute => ({
  name: "lookup",
  match: { tool: "show_entry" },
  replies,
});

const ASK_PREFIX = continuationAsk(1, [1]).slice(0, continuationAsk(1, [1]).indexOf("#"));
/** `preserve`'s cache-friendly checkpoint request: the live request plus one maintenance ask. */
export const preserveContinuationRoute = (replies: ScriptReply[]): ScriptRoute => ({
  name: "preserve-continuation",
  match: { lastText: ASK_PREFIX },
  replies,
});
/** `preserve`'s delta-only checkpoint request. */
export const preserveDeltaRoute = (replies: ScriptReply[]): ScriptRoute => ({
  name: "preserve-delta",
  match: { system: firstLine(DELTA_ONLY_SYSTEM) },
  replies,
});

/** A well-formed preserve tool summary body, as a model would write it. */
export function toolContext(userMessage: number, finding: string): ScriptReply {
  return {
    text: `## Tool Context\n### User message ${userMessage}\n#### Findings\n- ${finding}\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)`,
  };
}

/** Requests answered from the main queue, i.e. the agent's own turns. */
export const agentTurns = (requests: RecordedRequest[]) => requests.filter((r) => r.route === "main");

/** The conversation of a request without its system messages, as one string for `toContain` checks. */
export const conversation = (request: RecordedRequest) =>
  JSON.stringify(request.messages.filter((m) => m.role !== "system"));

/** Texts of a request's messages, in order. */
export const texts = (request: RecordedRequest) => request.messages.map(messageText);

/** One line per request (order, route, the start of its last message), for assertion messages. */
export function callLog(requests: RecordedRequest[]): string {
  return requests
    .map((r) => `#${r.n} ${r.route}: ${JSON.stringify(messageText(r.messages.at(-1)!).slice(0, 80))}`)
    .join("\n");
}
