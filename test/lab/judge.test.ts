// `--judge`, offline: the lab command with a scripted model behind Pi's real provider layer (pi-ai's faux
// provider, called through completeSimple). Covers the plumbing (one call per row's final view, results in
// the terminal and the JSON), the prompts (the row's own final context, questions that do not give the
// answer away) and the scoring (an answer counts only when its numbered line quotes the probe).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fauxAssistantMessage, registerFauxProvider } from "@earendil-works/pi-ai/compat";
import { afterAll, describe, expect, it } from "vitest";
import { runLab } from "../../src/lab/commands/lab.ts";
import { builtInJudgeModel, judgeView, pickProbes, questionFor } from "../../src/lab/judge.ts";
import { extractProbes } from "../../src/lab/probes.ts";
import type { LabResult } from "../../src/lab/results.ts";
import { readingSession, sessionJsonl } from "./fixtures.ts";

const CWD = "/home/u/proj";

function session() {
  const l = readingSession(CWD);
  l.user("Never touch the generated files under dist/, please.");
  l.call("Error: ENOENT: no such file or directory, open 'config.json'", { command: "node build.js" }, "bash", true);
  l.say("The build needs config.json.");
  return l;
}

const CONVERSATION = /<conversation>\n([\s\S]*)\n<\/conversation>/;

describe("--judge with a scripted model", () => {
  const faux = registerFauxProvider({ provider: "scripted", models: [{ id: "judge-1", contextWindow: 1_000_000 }] });
  afterAll(() => faux.unregister());
  const l = session();
  const probes = extractProbes(l.entries, CWD);
  const answers = new Map(probes.map((p) => [questionFor(p), p.text]));
  const prompts: string[] = [];
  // Answers from the conversation it was given; question 1 always gets a wrong answer, to test the scoring.
  faux.setResponses(
    Array.from({ length: 4 }, () => (context: { messages: { content: unknown }[] }) => {
      const prompt = String(context.messages[0].content);
      prompts.push(prompt);
      const conversation = CONVERSATION.exec(prompt)?.[1] ?? "";
      const lines = [...prompt.matchAll(/^(\d+)\. (.*)$/gm)].map(([, n, question]) => {
        const expected = answers.get(question);
        if (n === "1") return `1. not what you asked`;
        return `${n}. ${expected && conversation.includes(expected) ? `"${expected}"` : "unknown"}`;
      });
      return fauxAssistantMessage(lines.join("\n"));
    }),
  );

  it("asks once per row's final view, in that view, and scores each numbered answer", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-judge-"));
    const file = join(dir, "judged.jsonl");
    writeFileSync(file, sessionJsonl(l.entries, CWD));
    const json = join(dir, "out.json");
    let stdout = "";
    const code = await runLab(
      [
        file,
        "--window",
        "40k",
        "--strategies",
        "checkpoint,none",
        "--judge",
        "scripted/judge-1",
        "--json",
        json,
        "--no-report",
        "--quiet",
      ],
      { stdout: (t) => void (stdout += t), stderr: () => {} },
      { judgeModel: async (provider, modelId) => ({ model: faux.getModel(modelId)!, apiKey: `key-for-${provider}` }) },
    );
    expect(code).toBe(0);
    // Plumbing: one model call per row.
    expect(faux.state.callCount).toBe(2);
    expect(prompts).toHaveLength(2);
    const result = JSON.parse(readFileSync(json, "utf8")) as LabResult;
    const results = (result.judge?.results ?? []) as { session: string; row: string; asked: number; correct: number }[];
    expect(results.map((r) => [r.session, r.row, r.asked])).toEqual([
      ["judged.jsonl", "checkpoint", 6],
      ["judged.jsonl", "none", 6],
    ]);
    // Prompts: each carries six numbered questions about evenly picked probes, none giving its answer away.
    const chosen = pickProbes(probes, 6);
    for (const prompt of prompts) {
      expect(prompt).toMatch(
        /Answer from the conversation only\. Reply with one line per question, numbered, quoting exactly/,
      );
      const questions = [...prompt.matchAll(/^(\d+)\. (.*)$/gm)].map((m) => m[2]);
      expect(questions).toEqual(chosen.map(questionFor));
      for (const [i, q] of questions.entries()) if (chosen[i].text.length > 20) expect(q).not.toContain(chosen[i].text);
    }
    // The no-compaction view holds everything; the checkpoint's final view is its own, smaller context.
    const [checkpointPrompt, nonePrompt] = prompts;
    expect(nonePrompt.length).toBeGreaterThan(checkpointPrompt.length);
    expect(checkpointPrompt).toContain("<summary>");
    // Scoring: every present probe except question 1 (answered wrongly on purpose) counts.
    const present = (prompt: string) =>
      chosen.filter((p, i) => i > 0 && CONVERSATION.exec(prompt)![1].includes(p.text)).length;
    expect(results[0].correct).toBe(present(checkpointPrompt));
    expect(results[1].correct).toBe(5);
    expect(results[0].correct).toBeLessThan(5);
    expect(stdout).toContain(
      `Judge: scripted/judge-1 answered ${results[0].correct + 5}/12 probe questions correctly across 2 final contexts`,
    );
  });
});

describe("judge scoring and model lookup", () => {
  it("counts an answer only on its own numbered line, quoting the probe", async () => {
    const l = session();
    const probes = extractProbes(l.entries, CWD).slice(0, 2);
    const reply = `2. ${probes[0].text}\n1. unknown`;
    expect(await judgeView(async () => reply, [], probes)).toEqual({ asked: 2, correct: 0 });
    const right = `1. ${probes[0].text}\n2) ${probes[1].text}`;
    expect(await judgeView(async () => right, [], probes)).toEqual({ asked: 2, correct: 1 });
  });

  it("skips with a note, never an error, without credentials or with an unknown model", async () => {
    expect(await builtInJudgeModel("anthropic", "claude-sonnet-4-5", {})).toEqual({
      skip: "judge skipped: no credentials for anthropic in the environment",
    });
    expect(await builtInJudgeModel("nope", "model", {})).toEqual({
      skip: 'judge skipped: unknown model "nope/model" (expected provider/model)',
    });
    expect(await builtInJudgeModel("anthropic", "", {})).toMatchObject({
      skip: expect.stringMatching(/unknown model/),
    });
  });
});
