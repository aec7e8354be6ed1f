// One certification case: a fresh Pi agent directory with the installed package (from the global setup), the
// case's settings and nothing else, a project directory, and the real `pi --mode rpc` playing a scripted provider.
// Every step snapshots the session file, so `finish()` can check that each snapshot is a byte prefix of the next.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, inject } from "vitest";
import { RpcChild, type RpcRecord } from "../../e2e/fixtures/rpc-child.ts";
import {
  LOG_ENV,
  readRequests,
  SCRIPT_ENV,
  SCRIPTED_PROVIDER,
  type RecordedRequest,
  type Script,
} from "../../e2e/fixtures/script.ts";
import { PI, PROVIDER_EXTENSION, toolEnv } from "./paths.ts";

export interface CaseOptions {
  /** `contextLedger` in the global settings file; omitted means the package's defaults. */
  ledger?: Record<string, unknown>;
  /** Pi settings merged into the global settings file: only what the case is about. */
  pi?: Record<string, unknown>;
  /** Extra environment variables (for `PI_CONTEXT_LEDGER_*` overrides). */
  env?: Record<string, string>;
  /** Files written into the project directory. */
  files?: Record<string, string>;
  /** Use this project directory (two cases comparing requests need the same one: the system prompt names it). */
  cwd?: string;
  /** Pi's session id (providers see it as `sessionId`); default derived from the case name. */
  sessionId?: string;
  /** false: Pi alone, without the package (for comparisons). Default true. */
  withPackage?: boolean;
  /** The provider's script; the first model is the one Pi uses. */
  script: Script;
  /** Seconds to wait for one step (a prompt until `agent_settled`). Default 30. */
  stepTimeoutSeconds?: number;
}

export interface Notification {
  message: string;
  notifyType: string;
}

let counter = 0;
const live = new Set<PiCase>();

export class PiCase {
  readonly dir: string;
  readonly cwd: string;
  readonly agentDir: string;
  readonly logPath: string;
  readonly scriptPath: string;
  readonly sessionDir: string;
  readonly sessionId: string;
  /** Every `pi` process of the case, oldest first (restarts add one). */
  readonly processes: RpcChild[] = [];
  private readonly options: CaseOptions;
  private readonly snapshots: Buffer[] = [];
  private generation = 0;
  private sessionPath: string | undefined;

  private constructor(name: string, options: CaseOptions) {
    const cert = inject("cert");
    this.options = options;
    this.dir = join(
      cert.root,
      "cases",
      `${String(++counter).padStart(2, "0")}-${process.pid}-${name.replace(/[^a-z0-9]+/gi, "-")}`,
    );
    this.cwd = options.cwd ?? join(this.dir, "project");
    this.agentDir = join(this.dir, "agent");
    this.sessionDir = join(this.dir, "sessions");
    this.logPath = join(this.dir, "requests.jsonl");
    this.scriptPath = join(this.dir, "script.json");
    this.sessionId = options.sessionId ?? `cert-${name.replace(/[^a-z0-9]+/gi, "-")}`;
    for (const d of [this.cwd, this.agentDir, join(this.dir, "home")]) mkdirSync(d, { recursive: true });
    for (const [path, body] of Object.entries(options.files ?? {})) {
      mkdirSync(dirname(join(this.cwd, path)), { recursive: true });
      writeFileSync(join(this.cwd, path), body);
    }
    // The global settings: what `pi install` wrote, plus only what the case is about.
    const installed = JSON.parse(readFileSync(join(cert.templateAgentDir, "settings.json"), "utf8")) as Record<
      string,
      unknown
    >;
    const settings: Record<string, unknown> = {
      ...(options.withPackage === false ? {} : installed),
      ...(options.pi ?? {}),
    };
    if (options.ledger) settings.contextLedger = options.ledger;
    writeFileSync(join(this.agentDir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
    if (existsSync(join(cert.templateAgentDir, "auth.json")))
      copyFileSync(join(cert.templateAgentDir, "auth.json"), join(this.agentDir, "auth.json"));
    this.writeScript(options.script);
  }

  /** Create the case and start `pi`. */
  static async start(name: string, options: CaseOptions): Promise<PiCase> {
    const c = new PiCase(name, options);
    live.add(c);
    await c.launch();
    return c;
  }

  /** The running `pi`. */
  get rpc(): RpcChild {
    return this.processes[this.processes.length - 1];
  }

  private get timeoutMs(): number {
    return (this.options.stepTimeoutSeconds ?? 30) * 1000;
  }

  private async launch(): Promise<void> {
    const env = toolEnv({
      PI_CODING_AGENT_DIR: this.agentDir,
      HOME: join(this.dir, "home"),
      PI_OFFLINE: "1",
      [SCRIPT_ENV]: this.scriptPath,
      [LOG_ENV]: this.logPath,
      ...(this.options.env ?? {}),
    });
    const model = this.options.script.models[0].id;
    const args = [
      "--mode",
      "rpc",
      "--provider",
      SCRIPTED_PROVIDER,
      "--model",
      model,
      "--api-key",
      "test",
      "-e",
      PROVIDER_EXTENSION,
    ];
    args.push("--session-dir", this.sessionDir, "--session-id", this.sessionId);
    this.processes.push(RpcChild.spawn(PI, args, { cwd: this.cwd, env }));
    const state = (await this.rpc.send({ type: "get_state" }, this.timeoutMs)).data as { sessionFile?: string };
    this.sessionPath = state.sessionFile;
    this.snapshot();
  }

  private snapshot(): void {
    this.snapshots.push(
      this.sessionPath && existsSync(this.sessionPath) ? readFileSync(this.sessionPath) : Buffer.alloc(0),
    );
  }

  private writeScript(script: Script): void {
    writeFileSync(this.scriptPath, JSON.stringify({ ...script, generation: this.generation }));
  }

  /** Replace the script of the running process; every queue starts again from its first reply. */
  script(script: Script): void {
    this.generation++;
    this.writeScript(script);
  }

  /** Send a prompt and wait until Pi settles; returns the records of this run. */
  async prompt(message: string): Promise<RpcRecord[]> {
    const from = this.rpc.mark();
    const response = await this.rpc.send({ type: "prompt", message }, this.timeoutMs);
    const disposition = (response.data as { disposition?: string } | undefined)?.disposition;
    if (disposition !== "handled")
      await this.rpc.waitFor((r) => r.type === "agent_settled", "agent_settled", from, this.timeoutMs);
    this.snapshot();
    return this.rpc.records.slice(from);
  }

  /** The RPC `compact` command (what `/compact` runs); returns the response, successful or not. */
  async compact(customInstructions?: string): Promise<RpcRecord> {
    const response = await this.rpc.request(
      { type: "compact", ...(customInstructions ? { customInstructions } : {}) },
      this.timeoutMs,
    );
    this.snapshot();
    return response;
  }

  /** Stop `pi` and start it again on the same session. */
  async restart(): Promise<void> {
    await this.rpc.close();
    this.snapshot();
    await this.launch();
  }

  /** Every request the provider received in this case, across restarts. */
  requests(): RecordedRequest[] {
    return readRequests(this.logPath);
  }

  /** The session file as parsed entries (header included). */
  entries(): { type: string; [key: string]: unknown }[] {
    if (!this.sessionPath || !existsSync(this.sessionPath)) return [];
    return readFileSync(this.sessionPath, "utf8")
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as { type: string });
  }

  /** Every `ctx.ui.notify` the client was shown, across restarts. */
  notifications(): Notification[] {
    return this.processes
      .flatMap((p) => p.records)
      .filter((r) => r.type === "extension_ui_request" && r.method === "notify")
      .map((r) => ({ message: String(r.message), notifyType: String(r.notifyType ?? "info") }));
  }

  /** Everything `pi` wrote to stderr, across restarts. */
  stderr(): string {
    return this.processes.map((p) => p.stderr).join("\n");
  }

  /**
   * Stop `pi` and check what every case promises: the session file only ever grew (each snapshot is a byte
   * prefix of the next) and no extension failed to load.
   */
  async finish(): Promise<void> {
    live.delete(this);
    await this.rpc.close();
    this.snapshot();
    for (let i = 1; i < this.snapshots.length; i++) {
      const before = this.snapshots[i - 1];
      const after = this.snapshots[i];
      expect(after.length, `session file shrank between steps ${i - 1} and ${i}`).toBeGreaterThanOrEqual(before.length);
      expect(
        after.subarray(0, before.length).equals(before),
        `session file before step ${i} is not a byte prefix of the file after it`,
      ).toBe(true);
    }
    expect(this.stderr()).not.toContain("Failed to load extension");
  }

  /** Stop every `pi` a failed case left running (call from `afterEach`). */
  static async disposeAll(): Promise<void> {
    const cases = [...live];
    live.clear();
    await Promise.all(cases.flatMap((c) => c.processes.map((p) => p.close())));
  }
}
