// pi-context-ledger: the extension entry Pi loads from the package manifest. It sits at the package root so
// Pi's startup banner names it after the package ("pi-context-ledger") rather than after its folder.
// The rest loads only once Pi's version is known to be recent enough: an older Pi lacks exports the extension
// imports, and would fail with an error naming one of them instead of the version it needs.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { checkInstalledPi } from "./src/host/pi-version.ts";

export default async function contextLedger(pi: ExtensionAPI): Promise<void> {
  const problem = await checkInstalledPi();
  if (problem) throw new Error(`pi-context-ledger ${problem}`);
  const { registerContextLedger } = await import("./src/host/extension.ts");
  registerContextLedger(pi);
}
