// The project scope of the recall tools: `context_grep { scope: "project" }`, `context_list_entries { scope, session }`
// and `context_show_entry { id, session }`, and the same calls made by the lookup subagent. Trust is decided here:
// the switch from the global settings, the session directory (project-sessions.ts) and names, never paths.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import {
  CROSS_SESSION_OFF,
  checkSessionName,
  grepProject,
  listProjectSessions,
  resolveSession,
  type ProjectSource,
} from "../recall/project.ts";
import {
  listEntries,
  showEntry,
  type GrepParams,
  type ListParams,
  type ScanBudget,
  type SearchOutcome,
  type ShowParams,
} from "../recall/search.ts";
import { recallLimits, type RecallSettings } from "../recall/settings.ts";
import type { TranscriptIndex } from "../recall/transcript.ts";
import { ProjectSessionStore } from "./project-sessions.ts";

type Refusal = { ok: false; error: string };
const refuse = (error: string): Refusal => ({ ok: false, error });

/** True when a call's arguments ask for more than the current session. */
export function wantsProject(params: { scope?: unknown; session?: unknown }): boolean {
  return params.scope === "project" || (typeof params.session === "string" && params.session !== "");
}

/** Project-scope recall for one extension instance: the current session's live index plus the file store. */
export class ProjectRecall {
  private readonly store = new ProjectSessionStore();

  /**
   * @param liveIndex the current session's index, synced to its leaf (the recall tools' own cache)
   * @param budget the time budget of one grep call
   */
  private readonly liveIndex: (sm: ExtensionContext["sessionManager"]) => TranscriptIndex;
  private readonly budget: () => ScanBudget;

  constructor(liveIndex: (sm: ExtensionContext["sessionManager"]) => TranscriptIndex, budget: () => ScanBudget) {
    this.liveIndex = liveIndex;
    this.budget = budget;
  }

  private async source(ctx: ExtensionContext, settings: RecallSettings): Promise<ProjectSource | Refusal> {
    if (settings.crossSession === false) return refuse(CROSS_SESSION_OFF);
    const source = await this.store.source(ctx.sessionManager, this.liveIndex(ctx.sessionManager));
    return "refused" in source ? refuse(source.refused) : source;
  }

  /** The index a `session` argument names: this session's own id, or an earlier session of the project. */
  private async sessionIndex(
    ctx: ExtensionContext,
    raw: string,
    settings: RecallSettings,
  ): Promise<TranscriptIndex | Refusal> {
    const name = checkSessionName(raw);
    if (typeof name !== "string") return refuse(name.error);
    const sm = ctx.sessionManager;
    if (name === sm.getSessionId()) return this.liveIndex(sm);
    const source = await this.source(ctx, settings);
    if ("ok" in source) return source;
    const session = resolveSession(source.earlier, name);
    if (typeof session === "string") return refuse(session);
    const index = await source.open(session);
    return typeof index === "string" ? refuse(`session ${session.id} could not be read: ${index}`) : index;
  }

  /** `context_grep` with `scope: "project"`. */
  async grep(ctx: ExtensionContext, params: GrepParams, settings: RecallSettings): Promise<SearchOutcome<unknown>> {
    const source = await this.source(ctx, settings);
    if ("ok" in source) return source;
    return grepProject(source, params, recallLimits(settings), undefined, this.budget());
  }

  /** `context_list_entries` with `scope: "project"` (the sessions) or `session` (one session's entries). */
  async list(
    ctx: ExtensionContext,
    params: ListParams & { scope?: string },
    settings: RecallSettings,
  ): Promise<SearchOutcome<unknown>> {
    const limits = recallLimits(settings);
    if (params.session !== undefined && params.session !== "") {
      const index = await this.sessionIndex(ctx, params.session, settings);
      if ("ok" in index) return index;
      return listEntries(index, params, limits);
    }
    const source = await this.source(ctx, settings);
    if ("ok" in source) return source;
    if (params.role !== undefined && params.role.trim() !== "")
      return refuse(
        "role lists one session's entries: pass it with session, or omit it to list the project's sessions",
      );
    return listProjectSessions(source, params, limits);
  }

  /** `context_show_entry` with `session`. */
  async show(ctx: ExtensionContext, params: ShowParams, settings: RecallSettings): Promise<SearchOutcome<unknown>> {
    const index = await this.sessionIndex(ctx, params.session ?? "", settings);
    if ("ok" in index) return index;
    const outcome = showEntry(index, params, recallLimits(settings));
    return outcome.ok ? outcome : refuse(`session ${params.session}: ${outcome.error}`);
  }

  /** A lookup subagent's call that names a scope or a session; plain calls stay on the live index. */
  async lookupCall(
    ctx: ExtensionContext,
    name: string,
    args: Record<string, unknown>,
    settings: RecallSettings,
  ): Promise<SearchOutcome<unknown>> {
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    switch (name) {
      case "grep": {
        if (typeof args.pattern !== "string") return refuse("grep needs a string pattern");
        const params: GrepParams = {
          pattern: args.pattern,
          literal: args.literal === true,
          context: typeof args.context === "number" ? args.context : undefined,
          cursor: str(args.cursor),
          caseSensitive: args.caseSensitive === true,
          includeRecall: args.includeRecall === true,
        };
        if (args.scope === "project") return this.grep(ctx, params, settings);
        return refuse(
          'grep searches this session, or with scope: "project" this project\'s sessions; it takes no session argument',
        );
      }
      case "list_entries":
        return this.list(
          ctx,
          { role: str(args.role), cursor: str(args.cursor), session: str(args.session), scope: str(args.scope) },
          settings,
        );
      case "show_entry":
        if (typeof args.id !== "string") return refuse("show_entry needs a string id");
        return this.show(ctx, { id: args.id, cursor: str(args.cursor), session: str(args.session) }, settings);
      default:
        return refuse(`unknown tool ${name}; use list_entries, grep or show_entry`);
    }
  }
}
