// Other loaded extensions that also compact or rewrite the model's context. Pi keeps the last truthy
// `session_before_compact` result and chains `context` rewrites in load order, so a second compactor silently
// replaces this package's compaction (or this package replaces its). Pi 1.6 offers extensions no list of the others'
// handlers; the runner holds them, and it is found as the receiver of one synchronous call `pi.getCommands()` makes.
import { ExtensionRunner, type Extension, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { quoted } from "../log/display.ts";

/** The events whose handlers compete with this package: compaction, and the request's messages. */
const COMPETING = ["session_before_compact", "context", "context_with_system"] as const;

/** Another extension and the competing events it handles. */
export interface Neighbour {
  name: string;
  events: string[];
}

/** The extension runner of the session `pi` belongs to, or undefined when it cannot be found (Pi changed). */
function findRunner(pi: ExtensionAPI): ExtensionRunner | undefined {
  const prototype = ExtensionRunner.prototype;
  const original = prototype.getRegisteredCommands;
  let found: ExtensionRunner | undefined;
  prototype.getRegisteredCommands = function (this: ExtensionRunner) {
    found = this;
    return original.call(this);
  };
  try {
    pi.getCommands();
  } catch {
    found = undefined; // not bound yet
  } finally {
    prototype.getRegisteredCommands = original;
  }
  return found;
}

/**
 * The other loaded extensions that handle a competing event. `own` is a handler this extension registered for its
 * own command `command`: it tells this extension apart from the others, whatever its path. Undefined when the loaded
 * extensions cannot be read.
 */
export function competingExtensions(pi: ExtensionAPI, command: string, own: unknown): Neighbour[] | undefined {
  const runner = findRunner(pi);
  const extensions: unknown = runner ? Reflect.get(runner, "extensions") : undefined;
  if (!Array.isArray(extensions)) return undefined;
  const found: Neighbour[] = [];
  for (const extension of extensions as Extension[]) {
    if (!(extension?.handlers instanceof Map)) continue;
    if (extension.commands instanceof Map && extension.commands.get(command)?.handler === own) continue;
    const events = COMPETING.filter((event) => (extension.handlers.get(event)?.length ?? 0) > 0);
    if (events.length) found.push({ name: String(extension.path), events });
  }
  return found;
}

/** The warning naming the competing extensions, or undefined when there are none. */
export function neighbourWarning(neighbours: readonly Neighbour[]): string | undefined {
  if (!neighbours.length) return undefined;
  const named = neighbours.map((n) => `${quoted(n.name, 120)} (${n.events.join(", ")})`).join("; ");
  return (
    `other extensions also compact or rewrite the model's context: ${named}. Pi keeps the compaction of the last ` +
    "extension that returns one and applies context rewrites in load order, so one can silently replace the other's. " +
    "Keep one compactor, or set contextLedger.strategy to native to leave compaction to the other."
  );
}
