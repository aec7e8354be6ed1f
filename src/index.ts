// pi-context-ledger: entry point Pi loads from the package manifest.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerContextLedger } from "./host/extension.ts";

export default function contextLedger(pi: ExtensionAPI): void {
  registerContextLedger(pi);
}
