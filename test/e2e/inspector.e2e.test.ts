// The Stately inspector route, as a contributor would use it: PI_CONTEXT_LEDGER_INSPECT=1 and a local websocket
// receiver. A fold whose summary and target carry a planted secret must reach the receiver only as lengths and
// shapes, in every field of every event (snapshot context, input, output, events). With nothing listening the user
// gets one warning, not one per actor.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { fauxAssistantMessage, fauxToolCall } from "@earendil-works/pi-ai";
import { startHarness, userEntryId, type Harness } from "./harness.ts";
import { resetInspectorForTests } from "../../src/host/inspector.ts";

const SECRET = "hunter2";
let h: Harness | undefined;
let server: WebSocketServer | undefined;

beforeEach(() => {
  resetInspectorForTests();
  process.env.PI_CONTEXT_LEDGER_INSPECT = "1";
});
afterEach(async () => {
  await h?.dispose();
  h = undefined;
  for (const client of server?.clients ?? []) client.terminate();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
  server = undefined;
  resetInspectorForTests();
  delete process.env.PI_CONTEXT_LEDGER_INSPECT;
  delete process.env.PI_CONTEXT_LEDGER_INSPECT_URL;
});

async function listen(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  server = new WebSocketServer({ host: "127.0.0.1", port: 0 });
  await new Promise<void>((done) => server!.once("listening", () => done()));
  server.on("connection", (socket) => socket.on("message", (data) => received.push(String(data))));
  const { port } = server.address() as { port: number };
  return { url: `ws://127.0.0.1:${port}`, received };
}

async function foldWithSecret(harness: Harness): Promise<void> {
  harness.script([fauxAssistantMessage("noted")]);
  await harness.session.prompt(`remember ${SECRET}`);
  harness.script([
    () =>
      fauxAssistantMessage(
        [
          fauxToolCall("context_compact", {
            target: userEntryId(harness.session, SECRET),
            summary: `the password is ${SECRET}`,
          }),
        ],
        {
          stopReason: "toolUse",
        },
      ),
    fauxAssistantMessage("done"),
  ]);
  await harness.session.prompt(`fold it ${SECRET}`);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`never saw ${what}`);
}

describe("inspector e2e", () => {
  it("sends lifecycle events to a local receiver with every string redacted, actor output included", async () => {
    const { url, received } = await listen();
    process.env.PI_CONTEXT_LEDGER_INSPECT_URL = url;
    h = await startHarness();
    await foldWithSecret(h);
    await until(() => received.some((m) => m.includes('"done"')), "the actor's final snapshot");
    const all = received.join("\n");
    expect(all).toContain("@xstate.snapshot");
    expect(all).toContain("committed"); // state names stay readable
    expect(all).toMatch(/"output":\{/); // the output is there, as a shape
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain("password");
  });

  it("warns once when the inspector is on and nothing is listening", async () => {
    const { url } = await listen();
    await new Promise<void>((done) => server!.close(() => done()));
    server = undefined;
    process.env.PI_CONTEXT_LEDGER_INSPECT_URL = url;
    h = await startHarness();
    await foldWithSecret(h);
    await foldWithSecret(h);
    await until(() => h!.notices.some((n) => /inspector/.test(n.message)), "an inspector warning");
    await new Promise((r) => setTimeout(r, 200));
    const inspectorWarnings = h.notices.filter((n) => /inspector/.test(n.message));
    expect(inspectorWarnings).toHaveLength(1);
    expect(inspectorWarnings[0].type).toBe("warning");
    expect(JSON.stringify(h.notices)).not.toContain(SECRET);
  });
});
