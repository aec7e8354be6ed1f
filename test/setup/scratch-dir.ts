// One scratch folder per test run (vitest.config.ts `globalSetup`). The suite's temporary files, and those of the
// CLIs it spawns, go under it because TMPDIR points there before any worker starts; the teardown removes it, so a
// run leaves nothing in the machine's temporary folder even where a test forgets its own cleanup.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The environment variable that names the run's scratch folder, for the test that checks it is in use. */
export const SCRATCH_ENV = "PI_CONTEXT_LEDGER_TEST_SCRATCH";

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "pi-context-ledger-test-"));
  process.env.TMPDIR = root;
  process.env[SCRATCH_ENV] = root;
  return () => rmSync(root, { recursive: true, force: true });
}
