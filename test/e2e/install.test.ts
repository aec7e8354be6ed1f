// The real `pi` CLI installs this repo as a local package (offline) and loads it in RPC mode. A test-only
// extension supplies a scripted provider whose model calls `context_timeline`; the reply proves our
// extension loaded, registered its tools and commands, and answered with a real tool result.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = join(repo, "node_modules/.bin");
const fixture = join(repo, "test/e2e/fixtures/scripted-provider.ts");
const STEP_TIMEOUT_MS = 30_000;

type RpcRecord = { type: string; id?: string; command?: string; success?: boolean; data?: unknown; error?: string; [key: string]: unknown };

/** Minimal JSONL client: splits stdout on LF only (JSON strings may hold U+2028), correlates by id. */
class RpcChild {
  readonly records: RpcRecord[] = [];
  private buffer = "";
  private waiters: { match: (r: RpcRecord) => boolean; resolve: (r: RpcRecord) => void }[] = [];
  stderr = "";
  private next = 0;
  readonly exited: Promise<number | null>;
  readonly child: ChildProcessWithoutNullStreams;

  constructor(child: ChildProcessWithoutNullStreams) {
    this.child = child;
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let nl: number;
      while ((nl = this.buffer.indexOf("\n")) >= 0) {
        const line = this.buffer.slice(0, nl).replace(/\r$/, "");
        this.buffer = this.buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const record = JSON.parse(line) as RpcRecord;
        this.records.push(record);
        this.waiters = this.waiters.filter((w) => (w.match(record) ? (w.resolve(record), false) : true));
      }
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => (this.stderr += chunk));
    this.exited = new Promise((done) => child.on("exit", (code) => done(code)));
  }

  /** Wait for the first record (already received or future) that matches. */
  waitFor(match: (r: RpcRecord) => boolean, what: string): Promise<RpcRecord> {
    const seen = this.records.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr:\n${this.stderr.slice(-2000)}`)), STEP_TIMEOUT_MS);
      this.waiters.push({ match, resolve: (r) => (clearTimeout(timer), resolvePromise(r)) });
    });
  }

  async send(command: Record<string, unknown>): Promise<RpcRecord> {
    const id = `t${this.next++}`;
    this.child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
    const response = await this.waitFor((r) => r.type === "response" && r.id === id, `response to ${String(command.type)}`);
    if (!response.success) throw new Error(`${String(command.type)} failed: ${response.error}`);
    return response;
  }

  /** Close stdin for an orderly shutdown; kill if it does not exit in time. */
  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.exited;
    clearTimeout(timer);
  }
}

describe("real pi CLI install", () => {
  let root: string;
  let env: NodeJS.ProcessEnv;
  let cwd: string;
  let rpc: RpcChild | undefined;

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "ctx-ledger-install-"));
    cwd = join(root, "project");
    mkdirSync(cwd, { recursive: true });
    mkdirSync(join(root, "home"), { recursive: true });
    // Node 22 first on PATH; Pi state and any home-relative lookups stay inside the sandbox; no network.
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      PI_CODING_AGENT_DIR: join(root, "agent"),
      HOME: join(root, "home"),
      PI_OFFLINE: "1",
    };
  });

  afterAll(async () => {
    await rpc?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const pi = (...args: string[]) => spawnSync(join(bin, "pi"), args, { cwd, env, encoding: "utf8", timeout: STEP_TIMEOUT_MS });

  it("`pi install <repo path>` records the local package without touching the network", () => {
    const install = pi("install", repo);
    expect(install.status, install.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(root, "agent", "settings.json"), "utf8")) as { packages?: unknown[] };
    const paths = (settings.packages ?? []).map((p) => resolve(join(root, "agent"), typeof p === "string" ? p : String((p as { source?: unknown }).source)));
    expect(paths).toContain(repo);
    const list = pi("list");
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(repo);
  });

  it("`pi --mode rpc` loads the package: our command is listed and our tool answers a scripted model", async () => {
    const child = spawn(
      join(bin, "pi"),
      ["--mode", "rpc", "--no-session", "--offline", "--provider", "scripted", "--model", "scripted-1", "--api-key", "test", "-e", fixture],
      { cwd, env, stdio: ["pipe", "pipe", "pipe"] },
    );
    rpc = new RpcChild(child);

    const commands = (await rpc.send({ type: "get_commands" })).data as { commands: { name: string; source: string; sourceInfo?: { path?: string; origin?: string } }[] };
    const ours = commands.commands.filter((c) => c.source === "extension" && c.sourceInfo?.path === join(repo, "src/index.ts"));
    expect(ours.map((c) => c.name)).toContain("context");
    expect(ours.every((c) => c.sourceInfo?.origin === "package")).toBe(true);

    const started = (await rpc.send({ type: "prompt", message: "show me the context timeline" })).data as { disposition: string };
    expect(started.disposition).toBe("started");
    await rpc.waitFor((r) => r.type === "agent_settled", "agent_settled");

    const { messages } = (await rpc.send({ type: "get_messages" })).data as { messages: { role: string; toolName?: string; isError?: boolean; content?: unknown }[] };
    const result = messages.find((m) => m.role === "toolResult" && m.toolName === "context_timeline");
    expect(result, `no context_timeline result; roles: ${messages.map((m) => m.role).join(",")}`).toBeDefined();
    expect(result!.isError).toBe(false);
    expect(JSON.stringify(result!.content)).toContain("show me the context timeline");
    const reply = messages.filter((m) => m.role === "assistant").at(-1);
    expect(JSON.stringify(reply?.content)).toContain("TOOL_RESULT(context_timeline, error=false)");

    await rpc.close();
    expect(await rpc.exited).toBe(0);
  });
});
