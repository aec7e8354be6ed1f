// preserve's manual /compact when Pi is embedded through its SDK: `createAgentSession` with the package loaded from
// its path by Pi's own resource loader (as an installed package is), global settings `strategy: "preserve"`, Pi's
// default compaction settings, and no `session.bindExtensions()` call (an embedder without a UI has no reason to make
// it, so Pi never emits session_start). The faux provider records every call.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  fauxAssistantMessage,
  fauxProvider,
  fauxToolCall,
  type Context,
  type SimpleStreamOptions,
} from "@earendil-works/pi-ai";
import {
  createAgentSession,
  DefaultResourceLoader,
  ModelRuntime,
  SessionManager,
  SettingsManager,
  type AgentSession,
} from "@earendil-works/pi-coding-agent";

let cleanup: (() => void) | undefined;
afterEach(() => {
  cleanup?.();
  cleanup = undefined;
});

const textOf = (m: Context["messages"][number]): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");

async function embedded(bind: boolean): Promise<{
  session: AgentSession;
  calls: { context: Context; options: SimpleStreamOptions }[];
  script: (steps: ReturnType<typeof fauxAssistantMessage>[]) => void;
}> {
  const root = mkdtempSync(join(tmpdir(), "ctx-ledger-sdk-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  process.env.PI_CODING_AGENT_DIR = agentDir;
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextLedger: { strategy: "preserve" } }));
  writeFileSync(join(cwd, "small.ts"), "export const retries = 3; // MARK-S\n");
  const faux = fauxProvider({ models: [{ id: "faux-1", contextWindow: 128_000, maxTokens: 8_000 }] });
  const runtime = await ModelRuntime.create({
    authPath: join(root, "auth.json"),
    modelsPath: null,
    refreshOnCreate: false,
  });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey(faux.getModel().provider, "test-key");
  const loader = new DefaultResourceLoader({
    cwd,
    agentDir,
    additionalExtensionPaths: [resolve("index.ts")],
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
  });
  await loader.reload();
  expect(loader.getExtensions().errors).toEqual([]);
  const { session } = await createAgentSession({
    cwd,
    agentDir,
    modelRuntime: runtime,
    model: faux.getModel(),
    resourceLoader: loader,
    sessionManager: SessionManager.inMemory(cwd),
    settingsManager: SettingsManager.create(cwd, agentDir),
  });
  if (bind) await session.bindExtensions({});
  cleanup = () => {
    session.dispose();
    rmSync(root, { recursive: true, force: true });
  };
  const calls: { context: Context; options: SimpleStreamOptions }[] = [];
  const script = (steps: ReturnType<typeof fauxAssistantMessage>[]) =>
    faux.appendResponses(
      steps.map(
        (step) => (context: Context, options?: SimpleStreamOptions) => (
          calls.push({
            context: structuredClone({ ...context, tools: undefined }),
            options: { ...options, signal: undefined },
          }),
          step
        ),
      ),
    );
  return { session, calls, script };
}

describe("preserve embedded through Pi's SDK (Pi's default settings)", () => {
  for (const bind of [false, true]) {
    it(`/compact on a short session writes a tool summary and succeeds (${bind ? "with" : "without"} bindExtensions)`, async () => {
      const { session, calls, script } = await embedded(bind);
      script([
        fauxAssistantMessage([fauxToolCall("read", { path: "small.ts" })], { stopReason: "toolUse" }),
        fauxAssistantMessage("DONE-1"),
        fauxAssistantMessage(
          "## Tool Context\n### User message 1\n#### Findings\n- retries is 3\n\n#### Changes & Validation\n- (none)\n\n#### Unresolved\n- (none)",
        ),
        fauxAssistantMessage("after"),
      ]);
      await session.prompt("How many retries?");
      const result = await session.compact();
      const summaries = session.sessionManager
        .getBranch()
        .filter((e) => e.type === "custom_message" && e.customType === "context-ledger/preserve");
      expect(summaries).toHaveLength(1);
      expect(result.summary).toContain("retries is 3");
      expect(session.sessionManager.getBranch().at(-1)).toMatchObject({
        type: "compaction",
        details: { v: 1, strategy: "preserve", checkpoint: 1 },
      });
      // Calls: two live answers, one tool-summary request continuing the live conversation; no Pi summary.
      expect(calls).toHaveLength(3);
      expect(textOf(calls[2].context.messages.at(-1)!)).toContain("user message(s) 1");
      expect(calls[2].options).toMatchObject({
        disableContinuation: true,
        sessionId: session.sessionManager.getSessionId(),
      });
      await session.prompt("continue");
      const last = calls.at(-1)!.context.messages;
      expect(JSON.stringify(last)).not.toContain("MARK-S");
      expect(last.map(textOf)).toEqual(expect.arrayContaining(["How many retries?", "DONE-1", "continue"]));
    });
  }
});
