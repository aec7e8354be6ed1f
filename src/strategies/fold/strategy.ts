// The `fold` strategy as the registry lists it.
import { LedgerType } from "../../log/entries.ts";
import type { Strategy } from "../contract.ts";
import { FoldCoordinator } from "./hooks.ts";

export const foldStrategy = {
  name: "fold",
  summary: "Folds the model asks for with context_compact: its summary replaces the history after a named position.",
  // A fold is a tool request; it never answers Pi's compaction.
  routes: { turnEnd: "plan", manual: "native", threshold: "native", overflow: "native" },
  // The tools serve every configured strategy; the model, not a setting, asks for a fold.
  scope: "always",
  selectable: false,
  facts: { [LedgerType.fold]: "fold" },
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
} as const satisfies Strategy;
