// Public entry of the test arbitraries: generated Pi sessions for property tests in this repo and for
// contributors' own strategies. See ledger.ts for the shape of a generated ledger.
export {
  commandArb,
  DEFAULT_WEIGHTS,
  type CommandKind,
  type CommandWeights,
  type LedgerCommand,
  type ToolCallSpec,
  type ToolOutcome,
} from "./commands.ts";
export {
  buildLedger,
  ledgerArb,
  ledgerSeedArb,
  LedgerFolder,
  toJsonl,
  type GeneratedLedger,
  type LedgerOptions,
  type LedgerSeed,
  type LedgerStep,
} from "./ledger.ts";
export {
  isFoldableEntry,
  naiveContext,
  naiveHiddenIds,
  naivePinnedIds,
  naivePins,
  naiveRestores,
  naiveViewStart,
  restorableActs,
  visibleFoldTargets,
  type NaiveRestores,
} from "./visibility.ts";
export { codeArb, pathArb, proseArb, wordsArb } from "./text.ts";
