// Pins, host side: the `context_pin` / `context_unpin` tools for the model and `/context pin|unpin|pins` for the user.
// Each appends `context-ledger/pin` facts; the projection keeps pinned entries in view under every strategy. The tools
// record their request in execute() and commit at turn_end (a fact never lands between a tool call and its result);
// the commands append at once, once the agent is idle. Pins never call a model.
import { forTerminal } from "../log/display.ts";
import type {
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
  SessionBoundaryDraft,
} from "@earendil-works/pi-coding-agent";
import { Type } from "typebox";
import { LEDGER_PREFIX, type PinData, type SessionEntry } from "../log/entries.ts";
import { LedgerType } from "../strategies/catalog.ts";
import { planPin, planUnpin, renderPins, resolvePinTarget, type PinContext } from "../projection/pin-plan.ts";
import type { PinFact } from "../projection/pins.ts";
import { guardedTool } from "./tool-boundary.ts";
import type { LedgerSession } from "./ledger-session.ts";

/** Window assumed when no model is selected, as for compaction. */
const DEFAULT_CONTEXT_WINDOW = 128_000;
const PIN_TOOLS = new Set(["context_pin", "context_unpin"]);

/** `last` never names the pin request itself, its result, or one of this package's own notices. */
function isOwnTraffic(entry: SessionEntry): boolean {
  if (entry.type === "custom_message") return entry.customType.startsWith(LEDGER_PREFIX);
  if (entry.type !== "message") return false;
  const m = entry.message;
  if (m.role === "toolResult") return PIN_TOOLS.has(m.toolName);
  if (m.role !== "assistant") return false;
  const calls = (m.content ?? []).filter((b) => b.type === "toolCall");
  return calls.length > 0 && calls.every((b) => b.type === "toolCall" && PIN_TOOLS.has(b.name));
}

/** `/context pin <target> [note…]`: the target, then the rest of the line as the note. */
export function parsePinArgs(args: string): { target: string; note?: string } {
  const trimmed = args.trim();
  const space = trimmed.search(/\s/);
  if (space < 0) return { target: trimmed };
  const note = trimmed.slice(space + 1).trim();
  return { target: trimmed.slice(0, space), ...(note ? { note } : {}) };
}

export class PinHost {
  /** Facts asked for in this step, written at its end. */
  private pending: PinData[] = [];
  private readonly pi: ExtensionAPI;
  private readonly session: () => LedgerSession;

  constructor(pi: ExtensionAPI, session: () => LedgerSession) {
    this.pi = pi;
    this.session = session;
  }

  /** The live branch as pin decisions read it. */
  private context(ctx: ExtensionContext): PinContext {
    const session = this.session();
    session.sync(ctx.sessionManager);
    const live = session.live;
    return {
      path: live.entries,
      state: live.state,
      indexOf: (id) => live.indexOf(id),
      get: (id) => live.getEntry(id),
      at: (i) => live.entries[i],
      tokensAt: (i) => live.entryTokens(i),
    };
  }

  private budget(ctx: ExtensionContext): { window: number; share: number } {
    return { window: ctx.model?.contextWindow || DEFAULT_CONTEXT_WINDOW, share: this.session().settings.pins.maxShare };
  }

  /** Pending facts as the pins they will be (for the budget and for unpins in the same step). */
  private pendingPins(): PinFact[] {
    const pins: PinFact[] = [];
    for (const data of this.pending) {
      const at = pins.findIndex((p) => p.targetId === data.targetId);
      if (at >= 0) pins.splice(at, 1);
      if (data.pinned)
        pins.push({
          targetId: data.targetId,
          factId: "pending",
          ...(data.note !== undefined ? { note: data.note } : {}),
        });
    }
    return pins;
  }

  /** Plan a pin; on success returns the fact and the sentence that reports it. */
  private pin(
    target: string,
    note: string | undefined,
    ctx: ExtensionContext,
    skip: (e: SessionEntry) => boolean,
  ): { data: PinData; text: string } {
    const context = this.context(ctx);
    const resolved = resolvePinTarget(target, context, skip);
    if (!resolved.ok) throw new Error(resolved.error);
    const { window, share } = this.budget(ctx);
    const plan = planPin(resolved.id, note, context, window, share, this.pendingPins());
    if (!plan.ok) throw new Error(plan.error);
    const held = plan.entries > 1 ? `${plan.entries} entries (the tool call with its results)` : "1 entry";
    const text = `Pinned ${resolved.id}: ${held}, ~${plan.tokens.toLocaleString("en-US")} tokens; pins now hold ~${plan.figures.pinned.toLocaleString("en-US")} of ${plan.figures.budget.toLocaleString("en-US")} tokens allowed. It stays in the context verbatim through every compaction until unpinned.`;
    return { data: plan.data, text };
  }

  private unpin(target: string, ctx: ExtensionContext): { facts: PinData[]; text: string } {
    const context = this.context(ctx);
    const resolved = resolvePinTarget(target, context, isOwnTraffic);
    if (!resolved.ok) throw new Error(resolved.error);
    const plan = planUnpin(resolved.id, context, this.pendingPins());
    if (!plan.ok) throw new Error(plan.error);
    return {
      facts: plan.facts,
      text: `Unpinned ${resolved.id}. If a fold or compaction already covers it, it leaves the context; otherwise the next one may hide it like any other entry.`,
    };
  }

  registerTools(): void {
    this.pi.registerTool(
      guardedTool({
        name: "context_pin",
        label: "Pin context",
        description:
          "Pin an entry so it stays in your context verbatim through every compaction and fold: a spec you read, a constraint, a decision. " +
          "`target` is an entry id (context_timeline, context_list_entries and context_grep show them), a label, or `last` for the newest message before this call. " +
          "Pinning a tool call pins its result and the reverse. Pins share a budget (a tenth of the window by default); a pin past it is refused with the figures. " +
          "It applies when this step ends; pinning makes no model call.",
        promptSnippet: "Pin an entry so every compaction keeps it verbatim",
        parameters: Type.Object({
          target: Type.String({ description: "Entry id, label, or last" }),
          note: Type.Optional(Type.String({ description: "Why it is pinned (shown to the user in /context pins)" })),
        }),
        execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
          const { data, text } = this.pin(params.target, params.note, ctx, isOwnTraffic);
          this.pending.push(data);
          return {
            content: [{ type: "text" as const, text: `${text} (applies when this step ends)` }],
            details: { targetId: data.targetId },
          };
        },
      }),
    );
    this.pi.registerTool(
      guardedTool({
        name: "context_unpin",
        label: "Unpin context",
        description:
          "Let go of a pin made with context_pin or <keepContext>. `target` is the pinned entry's id (either side of a pinned tool call), a label, or `last`. " +
          "If a fold or compaction already covers the entry, it leaves your context; otherwise later ones may hide it like any other. It applies when this step ends.",
        promptSnippet: "Let go of a pin",
        parameters: Type.Object({ target: Type.String({ description: "Pinned entry id, label, or last" }) }),
        execute: async (_toolCallId, params, _signal, _onUpdate, ctx) => {
          const { facts, text } = this.unpin(params.target, ctx);
          this.pending.push(...facts);
          return {
            content: [{ type: "text" as const, text: `${text} (applies when this step ends)` }],
            details: { targetIds: facts.map((f) => f.targetId) },
          };
        },
      }),
    );
  }

  /** `/context pin <target> [note]`, `/context unpin <target>`, `/context pins`. */
  async command(sub: "pin" | "unpin" | "pins", args: string, ctx: ExtensionCommandContext): Promise<void> {
    // The fact must not land between a step's tool call and its result.
    if (!ctx.isIdle()) await ctx.waitForIdle();
    if (sub === "pins") {
      const { window, share } = this.budget(ctx);
      return ctx.ui.notify(forTerminal(renderPins(this.context(ctx), window, share)), "info");
    }
    const { target, note } = parsePinArgs(args);
    if (!target)
      return ctx.ui.notify(forTerminal(`context ${sub}: give a target: an entry id, a label, or last`), "error");
    try {
      if (sub === "pin") {
        const { data, text } = this.pin(target, note, ctx, isOwnTraffic);
        this.pi.appendEntry(LedgerType.pin, data);
        ctx.ui.notify(forTerminal(text), "info");
      } else {
        if (note) return ctx.ui.notify(forTerminal("context unpin: give one target (an unpin takes no note)"), "error");
        const { facts, text } = this.unpin(target, ctx);
        for (const data of facts) this.pi.appendEntry(LedgerType.pin, data);
        ctx.ui.notify(forTerminal(text), "info");
      }
    } catch (error) {
      ctx.ui.notify(forTerminal(`context ${sub}: ${error instanceof Error ? error.message : String(error)}`), "error");
    }
  }

  /** turn_end: write the step's pin facts. */
  onTurnEnd(entries: SessionBoundaryDraft[]): { entries: SessionBoundaryDraft[] } | undefined {
    if (!this.pending.length) return undefined;
    const facts = this.pending.map(
      (data): SessionBoundaryDraft => ({ type: "custom", customType: LedgerType.pin, data }),
    );
    this.pending = [];
    return { entries: [...entries, ...facts] };
  }

  /** A step that never reached turn_end: its pins were accepted, so they are written now that the run is over. */
  onAgentEnd(): void {
    for (const data of this.pending.splice(0)) this.pi.appendEntry(LedgerType.pin, data);
  }

  reset(): void {
    this.pending = [];
  }
}
