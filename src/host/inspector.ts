// Optional Stately inspector for the lifecycle actors (PI_CONTEXT_LEDGER_INSPECT=1). Transcript text never
// leaves the process: every string in contexts and events is replaced by its length before inspection.
import type { InspectionEvent, Observer } from "xstate";

/** Replace every string by a length marker, keeping the shape (keys, arrays, numbers, booleans). */
export function redactText(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.length <= 24 && /^[\w.:/-]*$/.test(value) ? value : `[text ${value.length} chars]`;
  if (depth > 6 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.slice(0, 20).map((v) => redactText(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = redactText(v, depth + 1);
  return out;
}

let inspector: Promise<Observer<InspectionEvent> | undefined> | undefined;

/** The inspection observer, created once per process; undefined when the package is unavailable. */
export function getInspector(onWarning: (message: string) => void): Promise<Observer<InspectionEvent> | undefined> {
  inspector ??= import("@statelyai/inspect")
    .then(({ createWebSocketInspector }) => {
      // The websocket receiver (e.g. `npx @statelyai/inspect` server) listens on localhost; the port is configurable.
      const ws = createWebSocketInspector({
        url: process.env.PI_CONTEXT_LEDGER_INSPECT_URL || "ws://localhost:8080",
        sanitizeContext: (context) => redactText(context) as typeof context,
        sanitizeEvent: (event) => redactText(event) as typeof event,
      });
      return ws.inspect as Observer<InspectionEvent>;
    })
    .catch((error: unknown) => {
      onWarning(`context-ledger: inspector unavailable (${error instanceof Error ? error.message : error})`);
      return undefined;
    });
  return inspector;
}
