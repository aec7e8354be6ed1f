// fast-check for the whole suite, loaded by vitest before every test file (vitest.config.ts `setupFiles`). The run
// count is FC_RUNS (default 200). Local runs explore a new random seed every time (a failure prints its seed);
// CI pins one so a landing run is reproducible; FC_SEED overrides both, e.g. to replay a reported failure.
import fc from "fast-check";
import { fastCheckSettings } from "../support/fast-check.ts";

fc.configureGlobal({ ...fc.readConfigureGlobal(), ...fastCheckSettings(process.env) });
