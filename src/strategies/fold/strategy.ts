// The `fold` strategy as the registry lists it.
import type { Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { FoldCoordinator } from "./hooks.ts";
import { FOLD_RECORD, foldFacts } from "./records.ts";

export const foldStrategy = {
  name: "fold",
  summary: "Folds the model asks for with context_compact: its summary replaces the history after a named position.",
  // A fold is a tool request; it never answers Pi's compaction.
  routes: { turnEnd: "plan", manual: "pi", threshold: "pi", overflow: "pi" },
  // The tools serve every configured strategy; the model, not a setting, asks for a fold.
  scope: "always",
  selectable: false,
  facts: { [FOLD_RECORD]: "fold" },
  records: foldFacts,
  // The model decides when to fold, so the lab stands a scripted agent in for it.
  lab: [
    {
      id: "fold",
      label: "fold (policy)",
      note: "fold strategy under a scripted policy: fold the finished request at each new user message",
      replay: { engine: "fold-policy" },
    },
    {
      id: "fold-notice",
      label: "fold (notice policy)",
      note: "fold strategy driven by budget notices: told at 0.8 of the threshold, a scripted agent folds finished requests at the next user message; checkpoint compaction at the threshold as the safety net",
      replay: { engine: "fold-notice" },
    },
  ],
  create(kit) {
    const folds = new FoldCoordinator(kit);
    if (kit.session().settings.foldTools) folds.register();
    return {
      effects: folds.effects,
      sessionStart: () => folds.reset(),
      sessionShutdown: () => folds.reset(),
      agentEnd: () => folds.onAgentEnd(),
      turnEnd: (event, ctx) => folds.onTurnEnd(event, ctx),
    };
  },
} as const satisfies Strategy & LabRows;
