// Wires every Pi event, tool and command of the package. Placeholder until the adapter lands.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";

export function registerContextLedger(_pi: ExtensionAPI): void {}
