// Optional Stately inspector for the lifecycle actors (PI_CONTEXT_LEDGER_INSPECT=1). Transcript text never leaves
// the process: every inspection event is redacted as a whole just before it is sent, so contexts, actor input and
// output, errors and events all reach the receiver as shapes and lengths. Only protocol fields and state names stay.
import type { InspectionEvent, Observer } from "xstate";

const MAX_ITEMS = 20;
const MAX_DEPTH = 6;
const MAX_QUEUED = 200;

/** Replace every string by a length marker, keeping the shape (keys, arrays, numbers, booleans). */
export function redactText(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return `[text ${value.length} chars]`;
  if (value === null || typeof value !== "object") return typeof value === "function" ? "[function]" : value;
  if (depth >= MAX_DEPTH) return Array.isArray(value) ? `[array ${value.length}]` : "[object]";
  if (Array.isArray(value)) return value.slice(0, MAX_ITEMS).map((v) => redactText(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value).slice(0, MAX_ITEMS)) out[k] = redactText(v, depth + 1);
  return out;
}

/** Fields of the inspection protocol that never carry transcript text: ids, timestamps, the machine definition. */
const PROTOCOL_FIELDS = new Set([
  "type",
  "_version",
  "createdAt",
  "id",
  "rootId",
  "parentId",
  "sessionId",
  "sourceId",
  "name",
  "definition",
]);

/**
 * Redact one serialized inspection event. State names (`snapshot.value`), status, tags and event types are
 * static strings from the chart, so they stay readable; everything else is reduced by `redactText`.
 */
export function redactInspectionEvent(event: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    if (PROTOCOL_FIELDS.has(key)) out[key] = value;
    else if (key === "snapshot" && value && typeof value === "object")
      out[key] = redactSnapshot(value as Record<string, unknown>);
    else if (key === "event" && value && typeof value === "object") {
      const { type, ...rest } = value as Record<string, unknown>;
      out[key] = { type: typeof type === "string" ? type : "[unknown]", ...(redactText(rest) as object) };
    } else out[key] = redactText(value);
  }
  return out;
}

function redactSnapshot(snapshot: Record<string, unknown>): Record<string, unknown> {
  const { status, value, tags, children, historyValue: _history, ...rest } = snapshot;
  return {
    status,
    value,
    tags,
    // Child actor refs are live objects (system, logic); only their ids are worth showing.
    ...(children && typeof children === "object" ? { children: Object.keys(children) } : {}),
    ...(redactText(rest) as object),
  };
}

interface Adapter {
  start(): void;
  stop(): void;
  send(event: unknown): void;
}

/**
 * A websocket adapter on Node's own WebSocket. It queues a bounded number of events until the receiver answers,
 * and reports the first failure once instead of retrying silently forever.
 */
function webSocketAdapter(url: string, warn: () => (message: string) => void): Adapter {
  let socket: WebSocket | undefined;
  let open = false;
  let warned = false;
  const queue: string[] = [];
  const fail = (why: string) => {
    open = false;
    if (warned) return;
    warned = true;
    warn()(
      `context-ledger: inspector is on (PI_CONTEXT_LEDGER_INSPECT) but nothing is listening at ${url} (${why}); start a receiver (docs/machines/README.md) or unset the variable`,
    );
  };
  return {
    start() {
      try {
        socket = new WebSocket(url);
      } catch (error) {
        fail(error instanceof Error ? error.message.slice(0, 120) : "invalid URL");
        return;
      }
      socket.addEventListener("open", () => {
        open = true;
        for (const message of queue.splice(0)) socket!.send(message);
      });
      socket.addEventListener("error", () => fail("connection failed"));
      socket.addEventListener("close", () => (open ? fail("connection closed") : undefined));
    },
    stop() {
      socket?.close();
      socket = undefined;
      open = false;
    },
    send(event) {
      const message = JSON.stringify(event);
      if (open && socket) socket.send(message);
      else if (!warned) {
        queue.push(message);
        if (queue.length > MAX_QUEUED) queue.shift();
      }
    },
  };
}

let inspector: Promise<{ observer: Observer<InspectionEvent>; adapter: Adapter } | undefined> | undefined;
let currentWarn: (message: string) => void = () => {};

/** The inspection observer, created once per process; undefined when `@statelyai/inspect` is not installed. */
export async function getInspector(
  onWarning: (message: string) => void,
): Promise<Observer<InspectionEvent> | undefined> {
  currentWarn = onWarning;
  inspector ??= import("@statelyai/inspect")
    .then(({ createInspector }) => {
      const adapter = webSocketAdapter(
        process.env.PI_CONTEXT_LEDGER_INSPECT_URL || "ws://localhost:8080",
        () => currentWarn,
      );
      const created = createInspector(adapter, {
        serialize: (event) =>
          redactInspectionEvent(event as unknown as Record<string, unknown>) as unknown as typeof event,
      });
      created.start();
      return { observer: created.inspect as Observer<InspectionEvent>, adapter };
    })
    .catch((error: unknown) => {
      const why = error instanceof Error ? error.message.slice(0, 160) : "unknown error";
      currentWarn(
        `context-ledger: inspector unavailable (${why}); install @statelyai/inspect next to the package to use it`,
      );
      return undefined;
    });
  return (await inspector)?.observer;
}

/** Close the socket and forget the process-wide inspector (tests, and Pi shutting the session down). */
export function resetInspectorForTests(): void {
  void inspector?.then((i) => i?.adapter.stop());
  inspector = undefined;
  currentWarn = () => {};
}
