// The `preserve` strategy as the registry lists it.
import type { Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { PreserveHost } from "./hooks.ts";
import { extractiveCheckpointAt } from "./lab.ts";
import { triggerTokens } from "./reserve.ts";
import { preserveSettings, type PreserveOptions } from "./settings.ts";
import { PRESERVE_RECORD, preserveFacts } from "./records.ts";

export const preserveStrategy = {
  name: "preserve",
  summary:
    "Dialogue stays verbatim; older tool traffic becomes byte-stable, cache-friendly summaries at step boundaries.",
  // The window is kept at step boundaries, so Pi's threshold compaction is declined; an overflow already failed a
  // request, and only Pi's summary can shrink a context that is all dialogue.
  // Checkpoints start at its own reserve curve, before Pi would compact.
  budget: {
    action: "older tool calls and results are replaced by a tool summary while the dialogue stays verbatim",
    ownThreshold: triggerTokens,
  },
  routes: { turnEnd: "plan", manual: "plan", threshold: "cancel", overflow: "pi" },
  scope: "configured",
  facts: { [PRESERVE_RECORD]: "tool summary" },
  records: preserveFacts,
  settings: preserveSettings,
  lab: [
    {
      id: "preserve",
      label: "preserve (extractive)",
      note: "preserve strategy: dialogue verbatim, older tool traffic replaced by append-only tool summaries (extractive writer, no model call)",
      setting: {
        sentence: `"strategy": "preserve"`,
        value: { strategy: "preserve" },
        caveat: "the lab ran its deterministic writer; with a model available, Pi's model writes the tool summaries",
      },
      replay: { engine: "boundary", step: extractiveCheckpointAt },
    },
  ],
  create(kit) {
    const preserve = new PreserveHost(kit);
    preserve.register();
    return {
      effects: preserve.effects,
      appliesTo: (ctx) => preserve.active(ctx),
      sessionStart: (ctx) => preserve.onSessionStart(ctx),
      sessionShutdown: () => preserve.onSessionShutdown(),
      beforeAgentStart: () => (preserve.onBeforeAgentStart(), undefined),
      agentSettled: () => preserve.onAgentSettled(),
      contextWithSystem: (messages) => (preserve.noteRequest(messages), undefined),
      messageEnd: (message) => preserve.noteResponse(message),
      turnEnd: (event, ctx, entries) => preserve.onTurnEnd(event, ctx, entries),
    };
  },
} as const satisfies Strategy<PreserveOptions> & LabRows;
