// A small DevTools-protocol driver for headless Chromium (no extra package): open a page, evaluate
// expressions, and capture a screenshot of any region, including below the fold.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"].find((p) =>
  existsSync(p),
);

export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--hide-scrollbars",
];

export interface Page {
  evaluate<T>(expression: string): Promise<T>;
  /** PNG bytes of a region of the page (CSS pixels, page coordinates). */
  screenshot(clip: { x: number; y: number; width: number; height: number }): Promise<Buffer>;
  close(): Promise<void>;
}

/** Open `url` in a fresh headless Chromium and wait until `ready` (a JS expression) is truthy. */
export async function openPage(url: string, ready: string, size = { width: 1280, height: 900 }): Promise<Page> {
  const profile = mkdtempSync(join(tmpdir(), "lab-chromium-"));
  const child: ChildProcess = spawn(
    CHROMIUM!,
    [
      ...CHROMIUM_FLAGS,
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      `--window-size=${size.width},${size.height}`,
      "about:blank",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const browserUrl = await new Promise<string>((ok, fail) => {
    let text = "";
    const timer = setTimeout(() => fail(new Error(`Chromium did not start: ${text.slice(0, 500)}`)), 30_000);
    child.stderr!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const match = /DevTools listening on (ws:\/\/\S+)/.exec(text);
      if (match) {
        clearTimeout(timer);
        ok(match[1]);
      }
    });
    child.once("exit", () => fail(new Error(`Chromium exited: ${text.slice(0, 500)}`)));
  });
  const port = new URL(browserUrl).port;
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as {
    type: string;
    webSocketDebuggerUrl: string;
  }[];
  const socket = new WebSocket(targets.find((t) => t.type === "page")!.webSocketDebuggerUrl);
  await new Promise((ok, fail) => {
    socket.onopen = ok;
    socket.onerror = fail;
  });
  let id = 0;
  const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void }>();
  const events: { method: string }[] = [];
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as {
      id?: number;
      result?: unknown;
      error?: { message: string };
      method?: string;
    };
    if (message.id !== undefined) {
      const waiter = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiter?.fail(new Error(message.error.message));
      else waiter?.ok(message.result);
    } else if (message.method) events.push({ method: message.method });
  };
  const send = <T>(method: string, params: Record<string, unknown> = {}) =>
    new Promise<T>((ok, fail) => {
      pending.set(++id, { ok: ok as (v: unknown) => void, fail });
      socket.send(JSON.stringify({ id, method, params }));
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const result = await send<{ result: { value?: T }; exceptionDetails?: { text: string } }>("Runtime.evaluate", {
      expression,
      returnByValue: true,
    });
    if (result.exceptionDetails) throw new Error(`page: ${result.exceptionDetails.text}`);
    return result.result.value as T;
  };
  await send("Page.enable");
  await send("Runtime.enable");
  await send("Emulation.setDeviceMetricsOverride", {
    width: size.width,
    height: size.height,
    deviceScaleFactor: 1,
    mobile: false,
  });
  await send("Page.navigate", { url });
  const deadline = Date.now() + 30_000;
  while (!(await evaluate<boolean>(`Boolean(${ready})`).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`page not ready: ${ready}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    evaluate,
    async screenshot(clip) {
      const shot = await send<{ data: string }>("Page.captureScreenshot", {
        format: "png",
        clip: { ...clip, scale: 1 },
        captureBeyondViewport: true,
      });
      return Buffer.from(shot.data, "base64");
    },
    async close() {
      socket.close();
      child.kill();
      await new Promise((r) => child.once("exit", r));
    },
  };
}
