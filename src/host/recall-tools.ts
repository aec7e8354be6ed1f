// Recall tools: context_lookup (a search subagent) and the direct fallbacks context_list_entries, context_grep
// and context_show_entry. They search the raw active branch through an in-memory transcript index that is kept
// per session and synced from the leaf backwards, so each call only renders entries appended since the last.
import type { AgentToolResult, ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { StringEnum, type Model, type Api } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { attemptWindow, decideLookupAttempt } from "../recall/attempts.ts";
import { runLookup, type LookupModel } from "../recall/lookup.ts";
import { MAX_QUESTION_LENGTH } from "../recall/input.ts";
import { grepTranscript, listEntries, showEntry, type ScanBudget, type SearchOutcome } from "../recall/search.ts";
import { recallLimits, type RecallSettings } from "../recall/settings.ts";
import { createTranscript, syncTranscript, type TranscriptIndex } from "../recall/transcript.ts";
import { CROSS_SESSION_OFF } from "../recall/project.ts";
import { resolveModel } from "./model-call.ts";
import { ProjectRecall, wantsProject } from "./project-recall.ts";
import { guardedTool } from "./tool-boundary.ts";

export type { RecallSettings } from "../recall/settings.ts";

/** Time one grep call may scan before it returns a continuation cursor. */
const GREP_TIME_BUDGET_MS = 3_000;

/**
 * The wall-clock budget of recall greps. Regular expressions run on a linear-time engine in bounded steps, and
 * this deadline, checked between steps, keeps one call short even on a huge branch.
 */
export function recallScanBudget(): ScanBudget {
  return {
    startBudget: () => {
      const deadline = performance.now() + GREP_TIME_BUDGET_MS;
      return () => performance.now() > deadline;
    },
  };
}

const MAX_SESSIONS = 3;

/** Transcript indexes per session id, most recently used last. */
export class RecallIndexes {
  private readonly bySession = new Map<string, TranscriptIndex>();

  /** The index of `ctx`'s session, synced to its current leaf. */
  for(sm: ExtensionContext["sessionManager"]): TranscriptIndex {
    const key = sm.getSessionId();
    const index = this.bySession.get(key) ?? createTranscript();
    syncTranscript(index, sm.getLeafId(), (id) => sm.getEntry(id));
    this.bySession.delete(key);
    this.bySession.set(key, index);
    while (this.bySession.size > MAX_SESSIONS) this.bySession.delete(this.bySession.keys().next().value as string);
    return index;
  }
}

const WHEN_TO_RECALL =
  "Use it to recover the exact text of an earlier output or error, to trace where an earlier finding or decision came from, to settle a contradiction between earlier notes and new evidence, or to avoid redoing slow research or expensive computation that this session already did.";
const WHEN_NOT =
  "Do not use it for the current contents of files (read them from disk: history shows what they were then), for requirements that were never given (ask the user), or for abandoned /tree branches (not searchable).";
const PROJECT_SCOPE =
  "scope: \"project\" also searches this project's earlier sessions (same working directory, newest first) and names the session of each hit: use it for an error, a decision or a command from an earlier session of this project. Other projects' sessions are never searched.";
// A plain string enum (`{ type: "string", enum }`), which every provider's tool schema accepts, typed for TypeBox.
const SCOPE_PARAM = (what: string) =>
  Type.Optional(Type.Unsafe<"session" | "project">(StringEnum(["session", "project"] as const, { description: what })));
const SESSION_PARAM = (what: string) => Type.Optional(Type.String({ description: what }));

const BLOCKED_NOTE =
  "context_lookup was not run: one lookup is allowed until a new user message, a bash run or other tool work. Continue with the direct tools instead: context_grep (search), context_show_entry (read one entry whole), context_list_entries (browse ids).";

function toResult<D>(outcome: SearchOutcome<D>): AgentToolResult<D> {
  // Thrown errors become error results the model sees, with the message as text.
  if (!outcome.ok) throw new Error(outcome.error);
  return { content: [{ type: "text", text: outcome.text }], details: outcome.details };
}

function lookupModel(ctx: ExtensionContext, configured: string | undefined): Model<Api> {
  // The same resolution as every strategy's model calls: `provider/model` from the settings, else the active model.
  const model = resolveModel(ctx, configured) ?? ctx.model;
  if (model) return model;
  if (configured)
    throw new Error(
      `recall.lookupModel ${configured} is not a known model and no model is active; use context_grep instead`,
    );
  throw new Error("no model is active for the lookup subagent; use context_grep / context_show_entry instead");
}

/** Register the four recall tools. `getSettings` is read on every call, so setting changes apply at once. */
export function registerRecallTools(pi: ExtensionAPI, getSettings: () => RecallSettings): RecallIndexes {
  const indexes = new RecallIndexes();
  const project = new ProjectRecall((sm) => indexes.for(sm), recallScanBudget);

  pi.registerTool(
    guardedTool({
      name: "context_lookup",
      label: "Context lookup",
      description: `Recover specific details from this session's earlier history, including everything compaction removed from your view. A subagent searches the full recorded branch (tool outputs, tool arguments, reasoning) in its own context and returns findings with ENTRY ids; its raw search results never enter this conversation. ${WHEN_TO_RECALL} ${WHEN_NOT} With ${PROJECT_SCOPE.replace("searches", "lets the subagent search")} Ask one precise question. One lookup is allowed per stretch of work (until new user input, a bash run or another tool's result); after that use context_grep / context_show_entry.`,
      promptSnippet:
        "Recover exact earlier outputs, provenance and decisions from this session's full history, including compacted parts",
      parameters: Type.Object({
        question: Type.String({
          description:
            "What to recover, precisely: e.g. the exact build error for src/auth.ts before compaction, with its ENTRY id",
        }),
        scope: SCOPE_PARAM(
          "session (default): this session only; project: the subagent may also search this project's earlier sessions",
        ),
      }),
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        if (params.question.length > MAX_QUESTION_LENGTH) {
          throw new Error(
            `the question is ${params.question.length} characters; the limit is ${MAX_QUESTION_LENGTH}. Ask one precise question`,
          );
        }
        const settings = getSettings();
        if (params.scope === "project" && settings.crossSession === false) throw new Error(CROSS_SESSION_OFF);
        const limits = recallLimits(settings);
        const sm = ctx.sessionManager;
        const decision = decideLookupAttempt(
          attemptWindow(sm.getLeafId(), (id) => sm.getEntry(id), toolCallId),
          toolCallId,
          limits.lookupAttempts,
        );
        if (!decision.allowed) {
          return {
            content: [{ type: "text", text: BLOCKED_NOTE }],
            details: { blocked: true, ordinal: decision.ordinal },
          };
        }
        const model = lookupModel(ctx, settings.lookupModel);
        const index = indexes.for(sm);
        // Normal provider caching defaults: the request options carry only the abort signal.
        const callModel: LookupModel = (request, callSignal) =>
          ctx.modelRegistry.complete(
            model,
            {
              systemPrompt: request.systemPrompt,
              messages: request.messages,
              ...(request.tools ? { tools: request.tools } : {}),
            },
            { signal: callSignal },
          );
        const searchProject =
          params.scope === "project"
            ? { run: (name: string, args: Record<string, unknown>) => project.lookupCall(ctx, name, args, settings) }
            : undefined;
        const outcome = await runLookup({
          question: params.question,
          index,
          callModel,
          limits,
          budget: recallScanBudget(),
          signal,
          now: Date.now(),
          ...(searchProject ? { project: searchProject } : {}),
        });
        const { text, ...details } = outcome;
        return {
          content: [{ type: "text", text }],
          details: { blocked: false, model: `${model.provider}/${model.id}`, ...details },
        };
      },
    }),
  );

  pi.registerTool(
    guardedTool({
      name: "context_list_entries",
      label: "Context entries",
      description: `List the entries of this session's active branch, including compacted ones: id, role, timestamp and a one-line preview, oldest first, paginated. With scope: "project", list this project's sessions instead (this one and the earlier ones of the same working directory, newest first: id, start date, first user message, entries); with session: <id>, list that session's entries. A fallback for context_lookup; results enter this conversation. ${WHEN_NOT}`,
      parameters: Type.Object({
        role: Type.Optional(
          Type.String({
            description: "Only this role: user, assistant, toolResult, bash, custom, compaction, branchSummary",
          }),
        ),
        cursor: Type.Optional(
          Type.String({ description: "Cursor from the previous page, to continue the same listing" }),
        ),
        scope: SCOPE_PARAM("session (default): this session's entries; project: this project's sessions"),
        session: SESSION_PARAM(
          "An earlier session of this project, by the id (or file name) the project listing or a project-scope grep gave; lists its entries",
        ),
      }),
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        if (wantsProject(params)) return toResult(await project.list(ctx, params, getSettings()));
        const limits = recallLimits(getSettings());
        return toResult(listEntries(indexes.for(ctx.sessionManager), params, limits));
      },
    }),
  );

  pi.registerTool(
    guardedTool({
      name: "context_grep",
      label: "Context grep",
      description: `Search the full recorded history of this session's active branch, including parts compacted out of your view: tool outputs, tool arguments, reasoning and messages. Regex by default, exact text with literal: true; case is ignored unless caseSensitive is true. Each match comes with surrounding lines and the ENTRY id it belongs to, paginated with a cursor. Earlier recall calls and their results are skipped unless includeRecall is true. ${WHEN_TO_RECALL} ${PROJECT_SCOPE} A fallback for context_lookup; results enter this conversation. ${WHEN_NOT}`,
      promptSnippet: "Search this session's full history (including compacted parts) by regex or exact text",
      parameters: Type.Object({
        pattern: Type.String({
          description:
            "Regular expression in RE2 syntax (JavaScript's, without backreferences or lookaround), matched line by line with ^/$ at line ends; or exact text when literal is true",
        }),
        literal: Type.Optional(
          Type.Boolean({ description: "Match the pattern as exact text, which may span lines (default false)" }),
        ),
        context: Type.Optional(
          Type.Number({ description: "Lines to show before and after each match, within its entry (default 0)" }),
        ),
        cursor: Type.Optional(
          Type.String({ description: "Cursor from the previous page; pass it with the same other arguments" }),
        ),
        caseSensitive: Type.Optional(
          Type.Boolean({ description: "Match upper and lower case exactly (default false: case is ignored)" }),
        ),
        includeRecall: Type.Optional(
          Type.Boolean({
            description:
              "Also search the calls and results of the recall tools themselves (context_grep, context_lookup, context_show_entry, context_list_entries, context_timeline); default false",
          }),
        ),
        scope: SCOPE_PARAM(
          "session (default): this session's active branch; project: this session, then this project's earlier sessions, newest first",
        ),
      }),
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        if (params.scope === "project") return toResult(await project.grep(ctx, params, getSettings()));
        const limits = recallLimits(getSettings());
        return toResult(grepTranscript(indexes.for(ctx.sessionManager), params, limits, recallScanBudget()));
      },
    }),
  );

  pi.registerTool(
    guardedTool({
      name: "context_show_entry",
      label: "Context entry",
      description: `Show one entry of this session's active branch by id, whole (tool output, arguments, reasoning), paginated for long outputs. Use ids from context_grep, context_list_entries or a context_lookup answer; for an entry of an earlier session of this project, pass that session's id as session. ${WHEN_NOT}`,
      parameters: Type.Object({
        id: Type.String({ description: "Entry id (a unique prefix of 4+ characters also works)" }),
        cursor: Type.Optional(Type.String({ description: "Cursor from the previous page of the same entry" })),
        session: SESSION_PARAM(
          "The session the entry is in, when it is an earlier session of this project: its id (or file name) as a project-scope grep or listing reported it",
        ),
      }),
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        if (wantsProject(params)) return toResult(await project.show(ctx, params, getSettings()));
        const limits = recallLimits(getSettings());
        return toResult(showEntry(indexes.for(ctx.sessionManager), params, limits));
      },
    }),
  );

  return indexes;
}
