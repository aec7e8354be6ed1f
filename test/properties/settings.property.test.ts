// Settings and environment values as properties: whatever JSON sits under `contextLedger` and whatever strings the
// PI_CONTEXT_LEDGER_* variables hold, resolving never throws, every warning is short and free of control bytes,
// and the result is itself valid settings (resolving it again changes nothing and warns about nothing).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveSettings } from "../../src/host/settings.ts";
import { anyJsonArb, envStringArb, hasRawControl, hostileStringArb } from "../arbitraries/hostile.ts";

const ENV_NAMES = [
  "STRATEGY",
  "FOLD_TOOLS",
  "RECALL_TOOLS",
  "INSPECT",
  "CAP_PERCENT",
  "GREP_MAX_RESULTS",
  "GREP_MAX_CHARS",
  "LOOKUP_TURN_BUDGET",
  "LOOKUP_MODEL",
  "PLANNED_TIMEOUT_MS",
  "PLANNED_MAX_OUTPUT_TOKENS",
];
const SECTIONS = [
  "strategy",
  "foldTools",
  "recallTools",
  "inspect",
  "recall",
  "checkpoint",
  "planned",
  "plannerModel",
  "preserve",
];

/** A `contextLedger` value: any JSON, or an object whose known keys hold any JSON (closer to a real typo). */
const rawArb = fc.oneof(
  anyJsonArb,
  fc.dictionary(
    fc.constantFrom(...SECTIONS),
    fc.oneof(anyJsonArb, hostileStringArb, fc.dictionary(fc.string({ maxLength: 20 }), anyJsonArb)),
  ),
);
const envArb = fc.dictionary(
  fc.constantFrom(...ENV_NAMES).map((n) => `PI_CONTEXT_LEDGER_${n}`),
  fc.oneof(envStringArb, hostileStringArb),
);

describe("settings properties", () => {
  it("any contextLedger JSON and any environment strings give valid settings with bounded warnings", () => {
    fc.assert(
      fc.property(rawArb, envArb, (raw, env) => {
        const { settings, warnings } = resolveSettings(raw, env);
        for (const warning of warnings) {
          expect(warning.length).toBeLessThan(400);
          expect(hasRawControl(warning)).toBe(false);
        }
        const again = resolveSettings(structuredClone(settings), {});
        expect(again.warnings).toEqual([]);
        expect(again.settings).toEqual(settings);
      }),
    );
  });
});
