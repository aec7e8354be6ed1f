// The optional judge: a real model answers probe questions from each row's final context, in the spirit of
// probe-based evaluation. Without credentials it is skipped with a one-line note, never an error.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { Api, Model } from "@earendil-works/pi-ai";
import { piCore } from "./pi-internals.ts";
import type { Probe } from "./probes.ts";
import type { RowInfo } from "./row.ts";

/** What the judge reports into the result. */
export interface JudgeNote {
  note: string;
  results?: { session: string; row: string; asked: number; correct: number }[];
}

/** A model call: prompt in, answer out. */
export type Ask = (prompt: string) => Promise<string>;

const QUESTIONS_PER_VIEW = 6;

/** A question whose answer is the probe's text, with a hint that does not give the answer away. */
export function questionFor(probe: Probe): string {
  const words = probe.text.split(/\s+/);
  switch (probe.kind) {
    case "path":
      return `Which exact file path was read or changed whose file name is "${probe.text.split("/").pop()}"?`;
    case "command":
      return `Which exact command was run that starts with "${words[0]}"?`;
    case "error":
      return `What exact error message did a tool report that starts with "${words.slice(0, 2).join(" ")}"?`;
    case "result":
      return `Quote the exact result line of a test or command run that starts with "${words[0]}".`;
    case "constraint":
      return `Quote exactly what the user said that starts with "${words.slice(0, 3).join(" ")}".`;
  }
}

/** Evenly spread probes, deterministic. */
export function pickProbes(probes: readonly Probe[], count: number): Probe[] {
  if (probes.length <= count) return probes.slice();
  const step = probes.length / count;
  return Array.from({ length: count }, (_, i) => probes[Math.floor(i * step)]);
}

/** Ask the questions against one context; an answer counts when it contains the probe text. */
export async function judgeView(
  ask: Ask,
  messages: readonly AgentMessage[],
  probes: readonly Probe[],
): Promise<{ asked: number; correct: number }> {
  const chosen = pickProbes(probes, QUESTIONS_PER_VIEW);
  const { convertToLlm, serializeConversation } = await piCore();
  const transcript = serializeConversation(convertToLlm(messages.slice()));
  const questions = chosen.map((p, i) => `${i + 1}. ${questionFor(p)}`).join("\n");
  const answer = await ask(
    `<conversation>\n${transcript}\n</conversation>\n\nAnswer from the conversation only. Reply with one line per question, numbered, quoting exactly; write "unknown" when the conversation does not say.\n\n${questions}`,
  );
  const lines = answer.split("\n");
  let correct = 0;
  chosen.forEach((probe, i) => {
    const line = lines.find((l) => l.trim().startsWith(`${i + 1}.`)) ?? "";
    if (line.includes(probe.text)) correct++;
  });
  return { asked: chosen.length, correct };
}

/** A model the judge can call, with its key; or why there is none. */
export type JudgeModel = { model: Model<Api>; apiKey: string } | { skip: string };

/** Find `provider/model` among Pi's built-in models and its API key in the environment. */
export async function builtInJudgeModel(
  provider: string,
  modelId: string,
  env: NodeJS.ProcessEnv,
): Promise<JudgeModel> {
  const ai = await import("@earendil-works/pi-ai/compat");
  const model = modelId
    ? (ai.getModel as (p: string, m: string) => Model<Api> | undefined)(provider, modelId)
    : undefined;
  if (!model) return { skip: `judge skipped: unknown model "${provider}/${modelId}" (expected provider/model)` };
  const apiKey = ai.getEnvApiKey(provider, env as Record<string, string>);
  if (!apiKey) return { skip: `judge skipped: no credentials for ${provider} in the environment` };
  return { model, apiKey };
}

/** Ask through Pi's provider layer: one user message, the reply's text. */
export async function askModel(found: Exclude<JudgeModel, { skip: string }>): Promise<Ask> {
  const ai = await import("@earendil-works/pi-ai/compat");
  return async (prompt) => {
    const reply = await ai.completeSimple(
      found.model,
      { messages: [{ role: "user", content: prompt, timestamp: 0 }] },
      { apiKey: found.apiKey },
    );
    return reply.content.map((b) => (b.type === "text" ? b.text : "")).join("");
  };
}

/** Resolves the `--judge` model; the CLI uses Pi's built-in models, tests a scripted one. */
export type ResolveJudgeModel = (provider: string, modelId: string, env: NodeJS.ProcessEnv) => Promise<JudgeModel>;

/** Prepare a judge for `provider/model`, or a note saying why it is skipped. */
export async function judgeRun(
  spec: string,
  env: NodeJS.ProcessEnv = process.env,
  resolve: ResolveJudgeModel = builtInJudgeModel,
) {
  const [provider, ...rest] = spec.split("/");
  const found = await resolve(provider, rest.join("/"), env);
  const skip = "skip" in found ? found.skip : undefined;
  const ask = "skip" in found ? undefined : await askModel(found);
  const pending: Promise<{ session: string; row: string; asked: number; correct: number }>[] = [];
  return {
    collect: ask
      ? (session: string, row: RowInfo, messages: readonly AgentMessage[], probes: readonly Probe[]) => {
          pending.push(judgeView(ask, messages, probes).then((r) => ({ session, row: row.id, ...r })));
        }
      : undefined,
    async finish(): Promise<JudgeNote> {
      if (skip) return { note: skip };
      const results = await Promise.all(pending);
      const asked = results.reduce((s, r) => s + r.asked, 0);
      const correct = results.reduce((s, r) => s + r.correct, 0);
      return {
        note: `${spec} answered ${correct}/${asked} probe questions correctly across ${results.length} final contexts`,
        results,
      };
    },
  };
}
