// The lab command's options, in one place: the command parses them (commands/lab.ts), and the CLI's parent
// process parses them too (heap.ts), to find which arguments are inputs and which are option values, before
// it loads any of the lab itself.
import type { ParseArgsConfig } from "node:util";

/** `parseArgs` options of `pi-context-ledger lab`. */
export const LAB_OPTIONS = {
  sessions: { type: "boolean" },
  last: { type: "string" },
  since: { type: "string" },
  jobs: { type: "string" },
  window: { type: "string" },
  strategies: { type: "string" },
  json: { type: "string" },
  report: { type: "string" },
  "no-report": { type: "boolean" },
  prices: { type: "string" },
  weights: { type: "string" },
  seed: { type: "string" },
  judge: { type: "string" },
  dump: { type: "string" },
  apply: { type: "boolean" },
  yes: { type: "boolean", short: "y" },
  quiet: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const satisfies ParseArgsConfig["options"];
