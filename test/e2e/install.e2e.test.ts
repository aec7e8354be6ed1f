// The real `pi` CLI installs this checkout as a local package (offline) and loads it in RPC mode. A test-only
// extension supplies a scripted provider whose model calls `context_timeline`; the request after it proves our
// extension loaded, registered its tools and commands, and answered with a real tool result.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RpcChild } from "./fixtures/rpc-child.ts";
import { LOG_ENV, readRequests, SCRIPT_ENV, type Script } from "./fixtures/script.ts";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const bin = join(repo, "node_modules/.bin");
const fixture = join(repo, "test/e2e/fixtures/scripted-provider.ts");
const STEP_TIMEOUT_MS = 30_000;

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
    const script: Script = {
      models: [{ id: "scripted-1", contextWindow: 128_000, maxTokens: 4_000 }],
      replies: [{ toolCalls: [{ name: "context_timeline", arguments: {} }] }, { text: "timeline read" }],
    };
    writeFileSync(join(root, "script.json"), JSON.stringify(script));
    env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH ?? ""}`,
      PI_CODING_AGENT_DIR: join(root, "agent"),
      HOME: join(root, "home"),
      PI_OFFLINE: "1",
      [SCRIPT_ENV]: join(root, "script.json"),
      [LOG_ENV]: join(root, "requests.jsonl"),
    };
  });

  afterAll(async () => {
    await rpc?.close();
    rmSync(root, { recursive: true, force: true });
  });

  const pi = (...args: string[]) =>
    spawnSync(join(bin, "pi"), args, { cwd, env, encoding: "utf8", timeout: STEP_TIMEOUT_MS });

  it("`pi install <repo path>` records the local package without touching the network", () => {
    const install = pi("install", repo);
    expect(install.status, install.stderr).toBe(0);
    const settings = JSON.parse(readFileSync(join(root, "agent", "settings.json"), "utf8")) as { packages?: unknown[] };
    const paths = (settings.packages ?? []).map((p) =>
      resolve(join(root, "agent"), typeof p === "string" ? p : String((p as { source?: unknown }).source)),
    );
    expect(paths).toContain(repo);
    const list = pi("list");
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(repo);
  });

  it("`pi --mode rpc` loads the package: our command is listed and our tool answers a scripted model", async () => {
    rpc = RpcChild.spawn(
      join(bin, "pi"),
      [
        "--mode",
        "rpc",
        "--no-session",
        "--offline",
        "--provider",
        "scripted",
        "--model",
        "scripted-1",
        "--api-key",
        "test",
        "-e",
        fixture,
      ],
      { cwd, env },
    );

    const commands = (await rpc.send({ type: "get_commands" })).data as {
      commands: { name: string; source: string; sourceInfo?: { path?: string; origin?: string } }[];
    };
    const ours = commands.commands.filter(
      (c) => c.source === "extension" && c.sourceInfo?.path === join(repo, "index.ts"),
    );
    expect(ours.map((c) => c.name)).toContain("context");
    expect(ours.every((c) => c.sourceInfo?.origin === "package")).toBe(true);

    const started = (await rpc.send({ type: "prompt", message: "show me the context timeline" })).data as {
      disposition: string;
    };
    expect(started.disposition).toBe("started");
    await rpc.waitFor((r) => r.type === "agent_settled", "agent_settled");

    // The request after the tool call carries our tool's real result.
    const requests = readRequests(join(root, "requests.jsonl"));
    expect(requests).toHaveLength(2);
    expect(requests[0].tools).toContain("context_timeline");
    const result = requests[1].messages.find((m) => m.role === "toolResult" && m.toolName === "context_timeline");
    expect(
      result,
      `no context_timeline result; roles: ${requests[1].messages.map((m) => m.role).join(",")}`,
    ).toBeDefined();
    expect(result!.role === "toolResult" && result!.isError).toBe(false);
    expect(JSON.stringify(result!.content)).toContain("show me the context timeline");
    expect(rpc.stderr).not.toContain("Failed to load extension");

    await rpc.close();
    expect(await rpc.exited).toBe(0);
  });

  it("in the real `pi`, another loaded compaction extension is named in one warning at startup", async () => {
    const rival = join(repo, "test/e2e/fixtures/rival-compactor.ts");
    rpc = RpcChild.spawn(
      join(bin, "pi"),
      [
        "--mode",
        "rpc",
        "--no-session",
        "--offline",
        "--provider",
        "scripted",
        "--model",
        "scripted-1",
        "--api-key",
        "test",
        "-e",
        fixture,
        "-e",
        rival,
      ],
      { cwd, env },
    );
    await rpc.send({ type: "get_commands" });
    const isWarning = (r: { type?: unknown; method?: unknown; message?: unknown }) =>
      r.type === "extension_ui_request" &&
      r.method === "notify" &&
      typeof r.message === "string" &&
      r.message.includes("other extensions also compact or rewrite");
    const warning = (await rpc.waitFor(isWarning, "the other-compactor warning")) as unknown as { message: string };
    expect(warning.message).toContain("rival-compactor.ts");
    expect(warning.message).toContain("(session_before_compact)");
    expect(rpc.records.filter(isWarning)).toHaveLength(1);
    await rpc.close();
    expect(await rpc.exited).toBe(0);
  });
});
