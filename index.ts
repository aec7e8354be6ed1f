// pi-context-ledger: the extension entry Pi loads from the package manifest. It sits at the package root so
// Pi's startup banner names it after the package ("pi-context-ledger") rather than after its folder.
// Pi's version is checked before anything is registered: an older Pi lacks functions the extension calls, and would
// fail later with an error naming one of them instead of the version it needs. (Pi loads extensions through its
// module loader, where a name an older Pi does not export imports as undefined rather than failing the import.)
import * as piPackage from "@earendil-works/pi-coding-agent";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerContextLedger } from "./src/host/extension.ts";
import { piVersionProblem } from "./src/host/pi-version.ts";

export default function contextLedger(pi: ExtensionAPI): void {
  const problem = piVersionProblem(Reflect.get(piPackage, "VERSION"));
  if (problem) throw new Error(`pi-context-ledger ${problem}`);
  registerContextLedger(pi);
}
