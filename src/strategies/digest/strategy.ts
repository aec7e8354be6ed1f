// The `digest` strategy as the registry lists it.
import type { Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { DigestHost } from "./hooks.ts";
import { digestAt, workingSetDigestAt } from "./lab.ts";
import { digestPolicy, digestSettings, type DigestOptions } from "./policy.ts";
import { DIGEST_RECORD, digestFacts } from "./records.ts";

export const digestStrategy = {
  name: "digest",
  summary: "Older tool steps become deterministic digests at step boundaries, with no model call.",
  // Only Pi's summary can shrink a context that overflowed on dialogue.
  // Digests come in batches long before this; here it covers every older step at once.
  budget: {
    action:
      "every older tool step is replaced by a digest (call, outcome, key output lines) while the dialogue stays verbatim",
    ownThreshold: (contextWindow: number) => digestPolicy(contextWindow).full,
  },
  routes: { turnEnd: "plan", manual: "plan", threshold: "plan", overflow: "pi" },
  scope: "configured",
  settings: digestSettings,
  facts: { [DIGEST_RECORD]: "digest" },
  records: digestFacts,
  lab: [
    {
      id: "digest",
      label: "digest",
      note: "digest strategy: dialogue verbatim; older tool steps become append-only digests (call line, error and result lines) in batches; no model call",
      // The working set is stated off: merged over a file that turned it on, plain digest must be what Pi runs.
      setting: {
        sentence: `"strategy": "digest", "digest": { "workingSet": false }`,
        value: { strategy: "digest", digest: { workingSet: false } },
      },
      replay: { engine: "boundary", step: digestAt },
    },
    {
      id: "digest-ws",
      label: "digest (working set)",
      note: "digest with contextLedger.digest.workingSet: a larger raw tail that reaches back to the newest read of each file in use, and edits' new texts quoted in digests; no model call",
      setting: {
        sentence: `"strategy": "digest", "digest": { "workingSet": true }`,
        value: { strategy: "digest", digest: { workingSet: true } },
      },
      replay: { engine: "boundary", step: workingSetDigestAt },
    },
  ],
  create(kit) {
    const digests = new DigestHost(kit);
    digests.register();
    return {
      effects: digests.effects,
      sessionStart: (ctx) => digests.onSessionStart(ctx),
      sessionShutdown: () => digests.onSessionShutdown(),
      beforeAgentStart: () => (digests.onBeforeAgentStart(), undefined),
      agentSettled: () => digests.onAgentSettled(),
      turnEnd: (event, ctx, entries) => digests.onTurnEnd(event, ctx, entries),
    };
  },
} as const satisfies Strategy<DigestOptions> & LabRows;
