// Shared pieces of the planned e2e tests: a work session big enough for Pi's default cut, and a recorder that keeps
// each provider call's messages, offered tools and options, so tests assert what reached the provider.
import { expect } from "vitest";
import {
  fauxAssistantMessage,
  fauxToolCall,
  type AssistantMessage,
  type FauxResponseStep,
  type Message,
  type SimpleStreamOptions,
  type Tool,
  type TranscriptContext,
} from "@earendil-works/pi-ai";
import type { CustomEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { PLANNER_SYSTEM } from "../../src/strategies/planned/model-plan.ts";
import type { Harness } from "./harness.ts";

/** Three files of about 10k tokens each: together more than Pi's default 20k kept tokens, so /compact has a region. */
const big = (tag: string) =>
  Array.from({ length: 480 }, (_, i) => `${tag}-LINE ${i} ${"filler ".repeat(11)}`).join("\n");
export const FILES = { "a.txt": big("A"), "b.txt": big("B"), "c.txt": big("C") };

export interface Call {
  planner: boolean;
  messages: Message[];
  tools: Tool[];
  options: SimpleStreamOptions | undefined;
  signal?: AbortSignal;
}

export const textOf = (m: Message): string =>
  typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("");

/** Wrap a step so the call (messages, offered tools, provider options) is recorded. */
export function recorded(calls: Call[], step: FauxResponseStep): FauxResponseStep {
  return async (context: TranscriptContext, options, state, model) => {
    const messages = structuredClone(context.messages);
    const system = messages.filter((m) => m.role === "system");
    const tools = system.flatMap((m) => (m as { toolsAdded?: Tool[] }).toolsAdded ?? []);
    const planner = system.some((m) => textOf(m).includes(PLANNER_SYSTEM));
    calls.push({
      planner,
      messages,
      tools,
      options: options && { ...options, signal: undefined },
      signal: options?.signal,
    });
    return typeof step === "function" ? step(context, options, state, model) : (step as AssistantMessage);
  };
}

/** Warnings the extension shows (the session is headless, so notices go to Pi's no-op UI context). */
export function captureWarnings(harness: Harness, onRestore: (restore: () => void) => void): string[] {
  const warnings: string[] = [];
  const runner = (
    harness.session as unknown as { _extensionRunner: { uiContext: { notify: (m: string, t?: string) => void } } }
  )._extensionRunner;
  const ui = runner.uiContext;
  const original = ui.notify;
  ui.notify = (message, type) => {
    if (type === "warning") warnings.push(message);
  };
  onRestore(() => {
    ui.notify = original;
  });
  return warnings;
}

/** One turn reading the three files, the root cause, and a short second turn. Returns the calls it made. */
export async function workSession(h: Harness): Promise<void> {
  h.script([
    fauxAssistantMessage(
      [
        fauxToolCall("read", { path: "a.txt" }),
        fauxToolCall("read", { path: "b.txt" }),
        fauxToolCall("read", { path: "c.txt" }),
      ],
      {
        stopReason: "toolUse",
      },
    ),
    fauxAssistantMessage("ROOT-CAUSE: TIMEOUT_MS is too low."),
    fauxAssistantMessage("second answer"),
  ]);
  await h.session.prompt(
    "Fix the login timeout.\n<keepContext>\nKEEP-THIS: the public API must not change.\n</keepContext>",
  );
  await h.session.prompt("second turn");
}

/** Numbered planner lines holding `needle`. */
export function linesWith(call: Call, needle: string): number[] {
  return call.messages
    .map(textOf)
    .join("\n")
    .split("\n")
    .flatMap((line) => (line.includes(needle) ? (/^(\d+)\| /.exec(line)?.[1] ?? []) : []))
    .map(Number);
}

export const branchOf = (h: Harness): SessionEntry[] => h.session.sessionManager.getBranch();
export const customsOf = <T>(h: Harness, type: string) =>
  branchOf(h).filter((e): e is CustomEntry<T> => e.type === "custom" && e.customType === type);

/**
 * A faux step answering the planner with a tool plan that deletes all of a.txt (and of b.txt when asked). `onCall`
 * runs when the request arrives, for tests that wait on a request made in the background.
 */
export function planFiles(calls: Call[], tags: string[] = ["A-LINE"], onCall?: () => void): FauxResponseStep {
  return recorded(calls, () => {
    onCall?.();
    const call = calls[calls.length - 1];
    expect(call.planner).toBe(true);
    const ranges = tags.map((tag) => {
      const lines = linesWith(call, tag);
      return { start: Math.min(...lines), end: Math.max(...lines) };
    });
    return fauxAssistantMessage([fauxToolCall("submit_deletion_plan", { ranges })], { stopReason: "toolUse" });
  });
}
