// The `checkpoint` strategy as the registry lists it.
import { effectiveCompaction } from "../../projection/ledger-state.ts";
import { compactionEffects } from "../shared/compaction-effects.ts";
import type { SettingsSection, Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { createCheckpointPlanner, DEFAULT_CHECKPOINT_OPTIONS, type CheckpointOptions } from "./planner.ts";
import { recapHooks } from "./recap-hooks.ts";
import { checkpointFacts } from "./records.ts";

/** `contextLedger.checkpoint` and PI_CONTEXT_LEDGER_CAP_PERCENT. */
const checkpointSettings: SettingsSection<CheckpointOptions> = {
  defaults: DEFAULT_CHECKPOINT_OPTIONS,
  resolve(target, raw, read) {
    // 0 or "off" turns the checkpoint cap off.
    const isCap = (v: unknown): v is number | "off" => v === "off" || (typeof v === "number" && v >= 0 && v <= 100);
    const capSetting = read.pick("checkpoint.capPercent", raw.capPercent, isCap, target.capPercent ?? 0);
    target.capPercent = capSetting === "off" ? 0 : capSetting;
    target.startupReads = read.pick("checkpoint.startupReads", raw.startupReads, read.isBool, target.startupReads);
    const cap = read.envValue("CAP_PERCENT");
    if (cap === undefined) return;
    const value = cap === "off" ? 0 : read.decimal(cap, true);
    if (isCap(value)) target.capPercent = value;
    else
      read.warn(
        `PI_CONTEXT_LEDGER_CAP_PERCENT: expected a decimal percentage from 0 to 100 (0 or off: no cap), got ${read.quote(cap)}; ignored`,
      );
  },
};

export const checkpointStrategy = {
  name: "checkpoint",
  summary: "A deterministic checkpoint of the compacted region, with no model call (the default).",
  budget: {
    action: "older turns are compacted into a verbatim checkpoint (no model call) and recent turns stay as they are",
  },
  routes: { turnEnd: "pi", manual: "plan", threshold: "plan", overflow: "plan" },
  records: checkpointFacts,
  // The recap follows every checkpoint compaction on the branch, whichever strategy is configured now.
  scope: "always",
  settings: checkpointSettings,
  lab: [
    {
      id: "checkpoint",
      label: "checkpoint",
      note: "checkpoint strategy: deterministic verbatim checkpoint, no model call",
      setting: { sentence: `"strategy": "checkpoint" (the default)`, value: { strategy: "checkpoint" } },
      replay: { engine: "compaction", planner: () => createCheckpointPlanner() },
    },
  ],
  create(kit) {
    const recap = recapHooks(
      kit,
      () => ({ enabled: true }),
      (ctx) => {
        const session = kit.session();
        session.sync(ctx.sessionManager);
        // The recap follows the compaction the view follows: a revoked one has no recap in view.
        const last = effectiveCompaction(session.live.state);
        return { branch: session.live.entries, lastCompaction: last ? session.live.indexOf(last.entryId) : -1 };
      },
    );
    return { effects: compactionEffects(kit.wrapPlanner(createCheckpointPlanner(() => kit.options())), kit), ...recap };
  },
} as const satisfies Strategy<CheckpointOptions> & LabRows;
