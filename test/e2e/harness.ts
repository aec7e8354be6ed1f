// Starts a real Pi 1.6 AgentSession on the faux provider with our extension loaded, and records
// every request the provider was sent. This is the backbone of the end-to-end suite.
import { mkdtempSync, rmSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  fauxProvider,
  type AssistantMessage,
  type FauxProviderHandle,
  type FauxResponseStep,
  type Message,
} from "@earendil-works/pi-ai";
import {
  createAgentSession,
  DefaultResourceLoader,
  ModelRuntime,
  SessionManager,
  SettingsManager,
  type AgentSession,
  type FileEntry,
  type InlineExtension,
} from "@earendil-works/pi-coding-agent";
import contextLedger from "../../index.ts";
import { registerContextLedger, type LedgerOptions } from "../../src/host/extension.ts";

export interface HarnessOptions {
  /** Load our extension (default true). */
  withLedger?: boolean;
  /** Test-only options of our extension (e.g. an inspection observer of the lifecycle charts). */
  ledgerOptions?: LedgerOptions;
  /** Test-only extensions loaded after ours (a factory, or a named one shown as `<inline:name>`). */
  extensions?: InlineExtension[];
  /** Test-only extensions loaded before ours, so their handlers for an event run first. */
  extensionsBefore?: InlineExtension[];
  /** Pi settings (in memory). `compaction` etc. */
  settings?: Record<string, unknown>;
  /** Our global settings, written to <agentDir>/settings.json under `contextLedger`. */
  ledgerSettings?: Record<string, unknown>;
  /** Reopen this session file instead of starting in memory. */
  sessionFile?: string;
  /** Persist the session to a file in the temp dir (default: in memory). */
  persist?: boolean;
  /** Persist the session in Pi's default session directory of the cwd, under the agent dir (as a user's `pi` does). */
  defaultSessionDir?: boolean;
  /** Reuse an existing temp root (to reload a session in the same sandbox). */
  root?: string;
  contextWindow?: number;
  /** The faux model supports reasoning, so a thinking level reaches its requests (default false). */
  reasoning?: boolean;
  /** Ids of further faux models of the same provider (e.g. a separate summary model). */
  extraModels?: string[];
  /** Entries an in-memory session starts with (a seeded history). */
  seedEntries?: FileEntry[];
  /** Files to create in the project cwd before the session starts. */
  files?: Record<string, string>;
}

export interface Harness {
  session: AgentSession;
  faux: FauxProviderHandle;
  /** Each provider request's messages, in order. */
  requests: Message[][];
  root: string;
  cwd: string;
  agentDir: string;
  /** Every `ctx.ui.notify` an extension made (the session runs headless, so Pi's UI context is a no-op). */
  notices: { message: string; type?: string }[];
  /** Queue scripted responses; each step may inspect the request. */
  script(steps: FauxResponseStep[]): void;
  sessionFile(): string | undefined;
  dispose(): Promise<void>;
}

/** Start a real AgentSession. Remember to `await h.dispose()`. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const root = options.root ?? mkdtempSync(join(tmpdir(), "ctx-ledger-e2e-"));
  const agentDir = join(root, "agent");
  const cwd = join(root, "project");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  for (const [name, body] of Object.entries(options.files ?? {})) {
    const path = join(cwd, name);
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, body);
  }
  // Never touch a real home: Pi and our settings loader both read this.
  process.env.PI_CODING_AGENT_DIR = agentDir;
  if (options.ledgerSettings) {
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ contextLedger: options.ledgerSettings }));
  }

  const faux = fauxProvider({
    models: [
      {
        id: "faux-1",
        contextWindow: options.contextWindow ?? 128_000,
        maxTokens: 8_000,
        reasoning: options.reasoning ?? false,
      },
      ...(options.extraModels ?? []).map((id) => ({
        id,
        contextWindow: options.contextWindow ?? 128_000,
        maxTokens: 8_000,
      })),
    ],
  });
  const runtime = await ModelRuntime.create({
    authPath: join(root, "auth.json"),
    modelsPath: null,
    refreshOnCreate: false,
  });
  runtime.registerNativeProvider(faux.provider);
  await runtime.setRuntimeApiKey(faux.getModel().provider, "test-key");

  const factories: InlineExtension[] = [...(options.extensionsBefore ?? [])];
  const ledgerOptions = options.ledgerOptions;
  if (options.withLedger !== false)
    factories.push(ledgerOptions ? (pi) => registerContextLedger(pi, ledgerOptions) : contextLedger);
  factories.push(...(options.extensions ?? []));
  const loader = new DefaultResourceLoader({
    cwd,
    agentDir,
    extensionFactories: factories,
    noSkills: true,
    noPromptTemplates: true,
    noThemes: true,
  });
  await loader.reload();

  const sessionManager = options.sessionFile
    ? SessionManager.open(options.sessionFile, join(root, "sessions"), cwd)
    : options.defaultSessionDir
      ? SessionManager.create(cwd)
      : options.persist
        ? SessionManager.create(cwd, join(root, "sessions"))
        : SessionManager.inMemory(cwd, undefined, options.seedEntries);

  const { session } = await createAgentSession({
    cwd,
    agentDir,
    modelRuntime: runtime,
    model: faux.getModel(),
    resourceLoader: loader,
    sessionManager,
    settingsManager: SettingsManager.inMemory({ ...(options.settings ?? {}) }),
  });
  await session.bindExtensions({});
  const notices: { message: string; type?: string }[] = [];
  const ui = (session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } })
    ._extensionRunner.uiContext;
  ui.notify = (message, type) => void notices.push({ message, type });

  const requests: Message[][] = [];
  const record =
    (step: FauxResponseStep): FauxResponseStep =>
    async (context, opts, state, model) => {
      requests.push(structuredClone(context.messages));
      return typeof step === "function" ? step(context, opts, state, model) : (step as AssistantMessage);
    };

  return {
    session,
    faux,
    requests,
    notices,
    root,
    cwd,
    agentDir,
    script: (steps) => faux.appendResponses(steps.map(record)),
    sessionFile: () => session.sessionManager.getSessionFile(),
    async dispose() {
      session.dispose();
      if (!options.root) rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A request's conversation (system messages left out) as one JSON string, for `toContain` checks. */
export function visibleText(messages: readonly Message[]): string {
  return JSON.stringify(messages.filter((m) => m.role !== "system"));
}

/** Id of the first user message on the session's branch whose content contains `needle`. */
export function userEntryId(session: AgentSession, needle: string): string {
  const entry = session.sessionManager
    .getBranch()
    .find(
      (e) => e.type === "message" && e.message.role === "user" && JSON.stringify(e.message.content).includes(needle),
    );
  if (!entry) throw new Error(`no user message contains ${JSON.stringify(needle)}`);
  return entry.id;
}

/** A notice an extension showed the user (`ctx.ui.notify`). */
export interface Notice {
  message: string;
  type?: string;
}

/**
 * Record what extensions show the user. The session runs headless, so notices go to Pi's no-op UI context; this wraps
 * its `notify`. Call `restore()` before disposing.
 */
export function captureNotices(h: Harness): { notices: Notice[]; restore(): void } {
  const runner = (
    h.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
  )._extensionRunner;
  const ui = runner.uiContext;
  const original = ui.notify;
  const notices: Notice[] = [];
  ui.notify = (message, type) => {
    notices.push({ message, type });
  };
  return { notices, restore: () => (ui.notify = original) };
}
