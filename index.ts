// pi-context-ledger: the extension entry Pi loads from the package manifest. It sits at the package root so
// Pi's startup banner names it after the package ("pi-context-ledger") rather than after its folder.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerContextLedger } from "./src/host/extension.ts";

export default function contextLedger(pi: ExtensionAPI): void {
  registerContextLedger(pi);
}
