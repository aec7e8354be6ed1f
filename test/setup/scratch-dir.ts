// One scratch folder per test run (vitest.config.ts `globalSetup`). The suite's temporary files, and those of the
// CLIs it spawns, go under it because TMPDIR points there before any worker starts; the teardown removes it, so a
// run leaves nothing in the machine's temporary folder even where a test forgets its own cleanup.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** The environment variable that names the run's scratch folder, for the test that checks it is in use. */
export const SCRATCH_ENV = "PI_CONTEXT_LEDGER_TEST_SCRATCH";

export default function setup(): () => void {
  // Vitest runs a global setup once per project: the first one makes the folder, the others keep it. A nested one
  // would lengthen every temporary path (Chromium's socket path and recall's session names have limits).
  if (process.env[SCRATCH_ENV]) return () => {};
  // A short name: tests that pass temporary paths into bounded fields must stay well within them.
  const root = mkdtempSync(join(tmpdir(), "pcl-test-"));
  process.env.TMPDIR = root;
  process.env[SCRATCH_ENV] = root;
  return () => rmSync(root, { recursive: true, force: true });
}
