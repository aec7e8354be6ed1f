// The `planned` strategy as the registry lists it.
import { compactionEffects } from "../shared/compaction-effects.ts";
import type { SettingsSection, Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { createPlannedPlanner, DEFAULT_PLANNED_OPTIONS, type PlannedOptions } from "./planner.ts";
import {
  PLANNED_REPORT,
  plannedCardLines,
  plannedReport,
  plannedUsage,
  usageLines,
  type PlannedReportDetails,
} from "./report.ts";
import { scriptedPlanner } from "./scripted.ts";
import { PlannerSpeculation } from "./speculation.ts";

/** `contextLedger.planned` and its PI_CONTEXT_LEDGER_PLANNED_* overrides. */
const plannedSettings: SettingsSection<PlannedOptions> = {
  defaults: DEFAULT_PLANNED_OPTIONS,
  resolve(target, raw, read) {
    const isPlanner = (v: unknown): v is "heuristic" | "model" => v === "heuristic" || v === "model";
    const isTokens = (v: unknown): v is number =>
      typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 10_000_000;
    const isMillis = (v: unknown): v is number =>
      typeof v === "number" && Number.isInteger(v) && v >= 100 && v <= 3_600_000;
    const plannerKind = read.pick<"heuristic" | "model" | undefined>(
      "planned.planner",
      raw.planner,
      isPlanner,
      undefined,
    );
    if (plannerKind) target.planner = plannerKind;
    target.retainRatio = read.pick("planned.retainRatio", raw.retainRatio, read.isRatio, target.retainRatio);
    target.minRetainedTokens = read.pick(
      "planned.minRetainedTokens",
      raw.minRetainedTokens,
      isTokens,
      target.minRetainedTokens,
    );
    target.minSavedTokens = read.pick("planned.minSavedTokens", raw.minSavedTokens, isTokens, target.minSavedTokens);
    target.timeoutMs = read.pick("planned.timeoutMs", raw.timeoutMs, isMillis, target.timeoutMs);
    target.maxOutputTokens = read.pick(
      "planned.maxOutputTokens",
      raw.maxOutputTokens,
      read.isCount,
      target.maxOutputTokens,
    );
    target.speculation = read.pick("planned.speculation", raw.speculation, read.isBool, target.speculation);
    target.speculationRatio = read.pick(
      "planned.speculationRatio",
      raw.speculationRatio,
      read.isRatio,
      target.speculationRatio,
    );
    const text = (v: string) => v;
    const num = (v: string) => read.decimal(v, true);
    read.env("PLANNED_PLANNER", text, isPlanner, "heuristic or model", (v) => (target.planner = v));
    read.env("PLANNED_RETAIN_RATIO", num, read.isRatio, "a ratio between 0 and 1", (v) => (target.retainRatio = v));
    read.env("PLANNED_MIN_RETAINED_TOKENS", num, isTokens, "a token count", (v) => (target.minRetainedTokens = v));
    read.env("PLANNED_MIN_SAVED_TOKENS", num, isTokens, "a token count", (v) => (target.minSavedTokens = v));
    read.env("PLANNED_TIMEOUT_MS", num, isMillis, "milliseconds (100-3600000)", (v) => (target.timeoutMs = v));
    read.env("PLANNED_MAX_OUTPUT_TOKENS", num, read.isCount, "a positive integer", (v) => (target.maxOutputTokens = v));
    target.speculation = read.envBool("PLANNED_SPECULATION", target.speculation ?? false);
    read.env(
      "PLANNED_SPECULATION_RATIO",
      num,
      read.isRatio,
      "a ratio between 0 and 1",
      (v) => (target.speculationRatio = v),
    );
  },
};

export const plannedStrategy = {
  name: "planned",
  summary: "A planner ranks deletions over a numbered transcript; host code applies them.",
  budget: { action: "a planner deletes the least useful lines of older history and the rest stays verbatim" },
  routes: { turnEnd: "pi", manual: "plan", threshold: "plan", overflow: "plan" },
  scope: "configured",
  settings: plannedSettings,
  dashboard: (entries) => usageLines(plannedUsage(entries)),
  lab: [
    {
      id: "planned",
      label: "planned (heuristic)",
      note: "planned strategy: heuristic deletion ranking, surviving lines verbatim, no model call",
      setting: {
        sentence: `"strategy": "planned", "planned": { "planner": "heuristic" }`,
        value: { strategy: "planned", planned: { planner: "heuristic" } },
      },
      replay: { engine: "compaction", planner: () => createPlannedPlanner() },
    },
    {
      id: "planned-model",
      label: "planned (scripted model)",
      note: "planned strategy, model planner path: a scripted model answers the heuristic's ranking through submit_deletion_plan; the planner request is a side call",
      replay: {
        engine: "compaction",
        planner: () => createPlannedPlanner(() => ({ ...DEFAULT_PLANNED_OPTIONS, planner: "model" })),
        model: scriptedPlanner,
      },
    },
  ],
  create(kit) {
    const speculation = new PlannerSpeculation(kit);
    const effects = compactionEffects(
      kit.wrapPlanner(createPlannedPlanner(() => kit.options())),
      kit,
      (complete, model, settings) => speculation.reuse(complete, model, settings),
    );
    // How long the last accepted plan took, from the host's start of the attempt, for the card Pi's confirmation gets.
    let planned: { durationMs: number } | undefined;
    kit.registerEntryCard<PlannedReportDetails>(PLANNED_REPORT, (data, _options, theme) => {
      if (data?.v !== 1) return undefined;
      const [head, ...rest] = plannedCardLines(data);
      return [theme.fg("accent", `≡ ${head}`), ...rest.map((l) => theme.fg("muted", l))].join("\n");
    });
    return {
      effects: {
        ...effects,
        async plan(request, signal) {
          planned = undefined;
          const result = await effects.plan(request, signal);
          if (result.ok) planned = { durationMs: kit.now() - (request.trace.startedAt ?? kit.now()) };
          return result;
        },
      },
      // Pi stored our compaction: its card, with the numbers the compaction entry carries and the planning time.
      sessionCompact: (event) => {
        const timing = planned;
        planned = undefined;
        if (!event.fromExtension || !timing) return;
        const report = plannedReport(event.compactionEntry, { trigger: event.reason, durationMs: timing.durationMs });
        if (report) kit.appendEntry(PLANNED_REPORT, report);
      },
      sessionStart: () => speculation.reset(),
      sessionShutdown: () => speculation.reset(),
      agentStart: () => speculation.onAgentStart(),
      agentEnd: (ctx) => speculation.onAgentEnd(ctx),
    };
  },
} as const satisfies Strategy<PlannedOptions> & LabRows;
