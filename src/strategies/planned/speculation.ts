// Speculative planning for the `planned` strategy (contextLedger.planned.speculation, off by default). When a run
// ends with the context past `speculationRatio` of the window, the planner request for the branch as it stands is
// sent ahead while the user reads the answer. A compaction reuses that reply only when its own planner request
// (model, prompt with the numbered region, objective and target, tools, output cap) and Pi's compaction settings
// are exactly the same; anything else aborts the candidate and plans afresh. At most one candidate per run.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { filterPreparation, strategyInput } from "../shared/compaction-effects.ts";
import type {
  CompleteText,
  CutSettings,
  ModelReply,
  ModelRequest,
  PrepareCompaction,
  StrategyKit,
} from "../contract.ts";
import { planPlanned, type PlannedOptions } from "./planner.ts";
import { forTerminal } from "../../log/display.ts";

interface Candidate {
  key: string;
  reply: Promise<string | ModelReply>;
  controller: AbortController;
}

/** Everything the reply depends on, as one exact string. */
function keyOf(model: string, request: ModelRequest, settings: CutSettings): string {
  return JSON.stringify([
    model,
    settings.keepRecentTokens,
    settings.reserveTokens,
    request.maxOutputTokens,
    request.tools ?? [],
    request.system,
    request.prompt,
  ]);
}

export class PlannerSpeculation {
  private candidate: Candidate | undefined;
  /** Pi's settings as the last real compaction reported them (Pi's defaults until then). */
  private cut: CutSettings;
  private startedThisRun = false;
  private prepareFn: PrepareCompaction | undefined | null;
  /** The load of Pi's preparation module, when one is under way. */
  private loading: Promise<void> | undefined;
  /** Candidates started and reused, for tests and diagnostics. */
  readonly counts = { started: 0, reused: 0, discarded: 0 };

  private readonly kit: StrategyKit<PlannedOptions>;

  constructor(kit: StrategyKit<PlannedOptions>) {
    this.kit = kit;
    this.cut = { ...kit.piCompaction.defaults };
    // Loaded ahead, so a candidate is registered within the agent_end handler, before Pi's post-run check.
    if (kit.options().speculation)
      this.loading = kit.piCompaction.prepare().then((fn) => void (this.prepareFn = fn ?? null));
  }

  /** A run starts: it may prepare one candidate when it ends. */
  onAgentStart(): void {
    this.startedThisRun = false;
  }

  /** Forget the candidate (session switch, shutdown). */
  reset(): void {
    this.discard();
    this.startedThisRun = false;
  }

  /** At the end of a run: prepare a candidate when the context passed the ratio. Never blocks. */
  onAgentEnd(ctx: ExtensionContext): void {
    const planned = this.kit.options();
    if (!planned.speculation || planned.planner === "heuristic" || this.startedThisRun) return;
    const usage = ctx.getContextUsage();
    if (!usage?.tokens || usage.tokens < (planned.speculationRatio ?? 0.7) * usage.contextWindow) return;
    if (this.prepareFn === null) {
      ctx.ui.notify(
        forTerminal(
          "context-ledger: speculative planning is unavailable (Pi's compaction preparation was not found); planning happens at compaction time.",
        ),
        "warning",
      );
      this.prepareFn = undefined;
      return;
    }
    this.startedThisRun = true;
    const start = () => {
      if (!this.prepareFn) return;
      try {
        this.prepare(ctx, this.prepareFn);
      } catch {
        // A candidate is an optimisation: any failure leaves planning to the compaction itself.
      }
    };
    // On a slow start the module may still be loading at the first run's end: prepare once it has (a little later
    // than Pi's post-run check, which only costs the chance to reuse at that check).
    if (this.prepareFn) start();
    else void this.loading?.then(start);
  }

  /** Synchronous up to the planner's model call, so the candidate exists when this returns. */
  private prepare(ctx: ExtensionContext, prepare: PrepareCompaction): void {
    const session = this.kit.session();
    const branch = ctx.sessionManager.getBranch();
    const preparation = prepare(branch, this.cut);
    if (!preparation) return;
    session.sync(ctx.sessionManager);
    const event = { preparation, branchEntries: branch, reason: "threshold" as const, customInstructions: undefined };
    filterPreparation(event, session);
    const call = this.kit.modelCall(ctx, session.settings.plannerModel);
    if (!call.complete || !call.model) return;
    const model = call.model;
    const controller = new AbortController();
    const cut = { ...this.cut };
    // Plan as a compaction would; the completer keeps the model call running as the candidate.
    const offer: CompleteText = (request) => {
      this.discard();
      const reply = call.complete!(request, controller.signal);
      reply.catch(() => undefined);
      this.candidate = { key: keyOf(model, request, cut), reply, controller };
      this.counts.started++;
      return reply;
    };
    planPlanned(strategyInput(event, ctx, this.kit.contextFiles(), offer), this.kit.options(), controller.signal).catch(
      () => undefined,
    );
  }

  private discard(): void {
    if (!this.candidate) return;
    this.candidate.controller.abort(new Error("speculative plan discarded"));
    this.candidate = undefined;
    this.counts.discarded++;
  }

  /**
   * The compaction's completer: a request identical to the candidate's gets the candidate's reply (marked
   * speculative); any other request aborts the candidate and asks the model afresh. A candidate that failed is
   * not trusted either: the model is asked again.
   */
  reuse(complete: CompleteText, model: string, settings: CutSettings): CompleteText {
    this.cut = { ...settings };
    return async (request, signal) => {
      const candidate = this.candidate;
      this.candidate = undefined;
      if (!candidate || candidate.key !== keyOf(model, request, this.cut)) {
        if (candidate) {
          candidate.controller.abort(new Error("speculative plan discarded"));
          this.counts.discarded++;
        }
        return complete(request, signal);
      }
      const onAbort = () => candidate.controller.abort(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      try {
        const reply = await this.kit.withDeadline(() => candidate.reply, signal, request.timeoutMs);
        this.counts.reused++;
        return typeof reply === "string"
          ? { text: reply, toolCalls: [], speculative: true }
          : { ...reply, speculative: true };
      } catch (error) {
        if (signal.aborted) throw error;
        return complete(request, signal);
      } finally {
        signal.removeEventListener("abort", onAbort);
      }
    };
  }
}
