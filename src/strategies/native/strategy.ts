// The `native` strategy as the registry lists it: Pi compacts, and the package adds nothing to its requests.
import type { Strategy } from "../contract.ts";
import type { LabRows } from "../../lab/row-spec.ts";
import { nativeFacts } from "./records.ts";

export const nativeStrategy = {
  name: "native",
  summary: "Pi's own compaction, unchanged.",
  budget: { action: "Pi summarizes older history with the model and recent turns stay as they are" },
  routes: { turnEnd: "pi", manual: "pi", threshold: "pi", overflow: "pi" },
  records: nativeFacts,
  scope: "configured",
  // It promises Pi's own requests, so even a budget notice waits for the user to ask for it.
  quietByDefault: true,
  lab: [
    {
      id: "native",
      label: "Pi native (sim.)",
      family: "baseline",
      note: "simulated Pi compaction: Pi's own cut point, request structure and file lists; stand-in summary text (~1k tokens)",
      setting: {
        sentence: `"strategy": "native"`,
        value: { strategy: "native" },
        caveat: "simulated: the summary is a stand-in that repeats nothing, so its quality is a floor",
      },
      replay: { engine: "pi-native" },
    },
  ],
  create: () => ({ effects: { plan: async () => ({ ok: false, reason: "Pi compacts" }) } }),
} as const satisfies Strategy & LabRows;
