// Certification of the package as a user receives it: the tarball from `npm pack`, installed by npm into an empty
// prefix, its CLI run from node_modules on Node 22, and `pi install` of the installed copy shown in a real `pi`.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { PI, toolEnv } from "./support/paths.ts";
import { say } from "./support/content.ts";
import { readingSession, sessionJsonl } from "../lab/fixtures.ts";

afterEach(() => PiCase.disposeAll());

const cli = (prefix: string, args: string[], cwd: string) =>
  spawnSync(join(prefix, "node_modules/.bin/pi-context-ledger"), args, {
    cwd,
    env: toolEnv(),
    encoding: "utf8",
    timeout: 60_000,
  });

describe("certification: the packed package", () => {
  it("installed without Pi (npm install --omit=dev --legacy-peer-deps): --help works, lab names the missing peer in one line", () => {
    const cert = inject("cert");
    const prefix = mkdtempSync(join(cert.root, "bare-prefix-"));
    execFileSync(
      "npm",
      [
        "install",
        "--prefix",
        prefix,
        "--omit=dev",
        "--legacy-peer-deps",
        "--prefer-offline",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        cert.tarball,
      ],
      {
        cwd: prefix,
        env: toolEnv(),
        stdio: "pipe",
        timeout: 120_000,
      },
    );
    expect(existsSync(join(prefix, "node_modules/@earendil-works/pi-coding-agent"))).toBe(false);
    const help = cli(prefix, ["--help"], prefix);
    expect(help.stderr).toBe("");
    expect(help.status).toBe(0);
    expect(help.stdout).toContain("Usage: pi-context-ledger <command>");
    const lab = cli(prefix, ["lab"], prefix);
    expect(lab.status).toBe(1);
    expect(lab.stderr.trim().split("\n")).toEqual([expect.stringContaining("@earendil-works/pi-coding-agent")]);
  });

  it("installed with Pi beside it: `lab` replays the generated sample and writes its report", () => {
    const cert = inject("cert");
    const cwd = mkdtempSync(join(cert.root, "lab-"));
    const help = cli(cert.prefix, ["--help"], cwd);
    expect(help.status, help.stderr).toBe(0);
    const lab = cli(cert.prefix, ["lab"], cwd);
    expect(lab.status, lab.stderr).toBe(0);
    expect(lab.stdout).toContain("checkpoint");
    expect(readFileSync(join(cwd, "lab-report.html"), "utf8")).toContain("<html");
  });

  it("the documented command, `npx pi-context-ledger lab --sessions`, replays the user's sessions from the installed copy", () => {
    const cert = inject("cert");
    const agentDir = mkdtempSync(join(cert.root, "agent-"));
    mkdirSync(join(agentDir, "sessions", "--p--"), { recursive: true });
    writeFileSync(
      join(agentDir, "sessions", "--p--", "mine.jsonl"),
      sessionJsonl(readingSession("/p", 3).entries, "/p"),
    );
    // npx finds the bin in the prefix's node_modules/.bin; --no-install keeps it from asking the registry.
    const lab = spawnSync("npx", ["--no-install", "pi-context-ledger", "lab", "--sessions", "--no-report"], {
      cwd: cert.prefix,
      env: toolEnv({ PI_CODING_AGENT_DIR: agentDir }),
      encoding: "utf8",
      timeout: 120_000,
    });
    expect(lab.status, lab.stderr).toBe(0);
    expect(lab.stdout).toContain("■ mine.jsonl");
    // The installed copy runs the compiled JavaScript: Node strips no types under node_modules.
    expect(existsSync(join(cert.packageDir, "dist/src/lab/bin.js"))).toBe(true);
  });

  it("`pi list` shows the installed copy and Pi's startup banner names the extension pi-context-ledger", async () => {
    const cert = inject("cert");
    const home = mkdtempSync(join(cert.root, "banner-"));
    const project = join(home, "project");
    mkdirSync(project);
    const env = toolEnv({ PI_CODING_AGENT_DIR: cert.templateAgentDir, HOME: home, PI_OFFLINE: "1" });
    const list = spawnSync(PI, ["list"], { cwd: project, env, encoding: "utf8", timeout: 30_000 });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(cert.packageDir);
    const screen = await startupScreen(project, env);
    expect(EXTENSIONS.exec(screen)?.[1], screen.slice(-3000)).toBe("pi-context-ledger");
    expect(screen).not.toContain("Failed to load extension");
  });
});

/** The first label under the banner's `[Extensions]` heading (the terminal UI pads lines with spaces, not newlines). */
const EXTENSIONS = /\[Extensions\]\s+([^\s,]+)/;

/** Interactive `pi` in a terminal (`script` provides one) until its banner lists the extensions; ctrl+d then ends it. */
function startupScreen(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn("script", ["-qfc", `${PI} --offline`, "/dev/null"], {
    cwd,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let screen = "";
  const plain = (text: string) =>
    text.replace(/\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "").replace(/\x1b\[[0-9;?]*[ -/]*[@-~]/g, "");
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => (
        child.kill("SIGKILL"), reject(new Error(`no extension list on pi's screen:\n${plain(screen).slice(-3000)}`))
      ),
      30_000,
    );
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      screen += chunk;
      if (EXTENSIONS.test(plain(screen))) child.stdin.write("\x04");
    });
    child.on("exit", () => (clearTimeout(timer), resolve(plain(screen))));
  });
}

describe("certification: the recall skill follows the recall tools", () => {
  const model = { id: "cert-128k", contextWindow: 128_000, maxTokens: 8_000 };
  const offered = async (name: string, options: { ledger?: Record<string, unknown>; env?: Record<string, string> }) => {
    const c = await PiCase.start(name, { ...options, script: { models: [model], replies: [say("ok")] } });
    const listed = (
      (await c.rpc.send({ type: "get_commands" })).data as {
        commands: { name: string; sourceInfo?: { path?: string } }[];
      }
    ).commands;
    // `/context` is there in every case, loaded from the installed copy.
    expect(listed.find((x) => x.name === "context")?.sourceInfo?.path).toBe(
      join(inject("cert").packageDir, "index.ts"),
    );
    const commands = listed.map((x) => x.name);
    await c.prompt("hello");
    // One prompt, one model call: the skill and the tools cost none.
    expect(c.requests()).toHaveLength(1);
    const [request] = c.requests();
    await c.finish();
    return {
      command: commands.includes("skill:context-recall"),
      prompt: request.systemPrompt.includes("context-recall"),
      tool: request.tools.includes("context_grep"),
    };
  };

  it("offered with the recall tools (default)", async () => {
    expect(await offered("skill-default", {})).toEqual({ command: true, prompt: true, tool: true });
  });

  it("withheld when contextLedger.recallTools is false", async () => {
    expect(await offered("skill-off-setting", { ledger: { recallTools: false } })).toEqual({
      command: false,
      prompt: false,
      tool: false,
    });
  });

  it("withheld when PI_CONTEXT_LEDGER_RECALL_TOOLS=0", async () => {
    expect(await offered("skill-off-env", { env: { PI_CONTEXT_LEDGER_RECALL_TOOLS: "0" } })).toEqual({
      command: false,
      prompt: false,
      tool: false,
    });
  });
});
