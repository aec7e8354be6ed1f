// A generated session replayed the way the host and the lab hand planners their branch: one live path array that
// grows at the leaf and moves on a `/tree` jump. Properties of per-branch indexes check them after every step.
import type { SessionEntry } from "../../src/log/entries.ts";
import { ActivePath } from "../../src/log/branch.ts";
import type { GeneratedLedger } from "../arbitraries/index.ts";

/** Replay a generated session's steps on one live path array, calling `check` after each step with the array. */
export function replayLivePath(
  ledger: GeneratedLedger,
  check: (path: readonly SessionEntry[], step: number) => void,
): void {
  const byId = new Map<string, SessionEntry>();
  const path = new ActivePath();
  ledger.steps.forEach((step, k) => {
    if (step.kind === "append") {
      byId.set(step.entry.id, step.entry);
      path.moveTo(step.entry.id, (id) => byId.get(id));
    } else path.moveTo(step.leafId, (id) => byId.get(id));
    check(path.entries, k);
  });
}
