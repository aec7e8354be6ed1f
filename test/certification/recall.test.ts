// Certification of the recall tools through the installed package in the real `pi`: text that an idle `/compact`
// (default strategy, Pi's default settings, 64k window) took out of the model's view is found again, and a second
// session of the same project finds the first session's output with the project scope.
import { afterEach, describe, expect, it } from "vitest";
import { PiCase } from "./support/pi-case.ts";
import { call, callLog, conversation, lookupRoute, read, say, textFile } from "./support/content.ts";
import type { ScriptModel, ScriptReply, ScriptRoute } from "../e2e/fixtures/script.ts";

afterEach(() => PiCase.disposeAll());

const MODEL: ScriptModel = { id: "cert-64k", contextWindow: 64_000, maxTokens: 8_000 };
const FILES = Object.fromEntries(["a", "b", "c"].map((n) => [`${n}.txt`, textFile(`FILE-${n.toUpperCase()}`, 10_000)]));
const HIDDEN = "FILE-A line 0007";

/** Three reads and an answer, then `/compact`: a.txt's output is no longer in view. */
async function compactedSession(name: string, later: ScriptReply[], routes: ScriptRoute[] = []): Promise<PiCase> {
  const c = await PiCase.start(name, {
    files: FILES,
    script: {
      models: [MODEL],
      routes,
      replies: [read("a.txt"), read("b.txt"), read("c.txt"), say("read all three"), ...later],
    },
  });
  await c.prompt("Read a.txt, b.txt and c.txt.");
  const response = await c.compact();
  expect(response.success, response.error).toBe(true);
  return c;
}

describe("certification: recall", () => {
  it("context_grep finds text a compaction hid", async () => {
    const c = await compactedSession("recall-grep", [
      call("context_grep", { pattern: HIDDEN, literal: true }),
      say("found it"),
    ]);
    await c.prompt("What was line 7 of a.txt? Search the history.");
    const requests = c.requests();
    // Four turns for the first prompt, two for the second (the search and the answer); recall calls no model.
    expect(requests, callLog(requests)).toHaveLength(6);
    expect(conversation(requests[4])).not.toContain(HIDDEN);
    const result = requests[5].messages.find((m) => m.role === "toolResult" && m.toolName === "context_grep");
    expect(result?.role === "toolResult" && result.isError).toBe(false);
    expect(JSON.stringify(result?.content)).toContain(HIDDEN);
    await c.finish();
  });

  it("context_lookup finds text a compaction hid: its subagent searches, the agent gets the answer", async () => {
    const c = await compactedSession(
      "recall-lookup",
      [call("context_lookup", { question: "What exactly was line 7 of a.txt?" }), say("the lookup answered")],
      [
        lookupRoute([
          call("grep", { pattern: HIDDEN, literal: true }),
          say("LOOKUP-ANSWER: line 7 of a.txt was recorded."),
        ]),
      ],
    );
    await c.prompt("What was line 7 of a.txt? Look it up.");
    const requests = c.requests();
    // Six agent turns as above, plus the two subagent turns the lookup documents (a search, then the answer).
    expect(requests, callLog(requests)).toHaveLength(8);
    const lookup = requests.filter((r) => r.route === "lookup");
    expect(lookup).toHaveLength(2);
    const found = lookup[1].messages.find((m) => m.role === "toolResult" && m.toolName === "grep");
    expect(JSON.stringify(found?.content)).toContain(HIDDEN);
    const answer = requests[7].messages.find((m) => m.role === "toolResult" && m.toolName === "context_lookup");
    expect(answer?.role === "toolResult" && answer.isError).toBe(false);
    expect(JSON.stringify(answer?.content)).toContain("LOOKUP-ANSWER");
    // The subagent's search results stay out of the agent's context.
    expect(conversation(requests[7])).not.toContain(HIDDEN);
    await c.finish();
  });

  it("a second session of the project finds the first session's output with scope: project", async () => {
    const NEEDLE = "CERT-EARLIER-OUTPUT-42";
    const c = await PiCase.start("recall-project", {
      script: {
        models: [MODEL],
        replies: [call("bash", { command: "echo CERT-EARLIER-OUTPUT-$((40 + 2))" }), say("ran it")],
      },
    });
    await c.prompt("Run the command.");
    const first = (await c.rpc.send({ type: "get_state" })).data as { sessionId: string; sessionFile: string };
    const started = (c.entries()[0] as { timestamp?: string }).timestamp;
    const switched = await c.rpc.request({ type: "new_session" });
    expect(switched.success, switched.error).toBe(true);
    const second = (await c.rpc.send({ type: "get_state" })).data as { sessionId: string };
    expect(second.sessionId).not.toBe(first.sessionId);
    // The scripted provider starts its queue again in a new session: the second session's own script.
    c.script({
      models: [MODEL],
      replies: [call("context_grep", { pattern: NEEDLE, literal: true, scope: "project" }), say("found it")],
    });
    await c.prompt("What did the command print in the earlier session? Search the project's history.");
    const requests = c.requests();
    // Two turns per session; the search itself calls no model.
    expect(requests, callLog(requests)).toHaveLength(4);
    // The new session starts without the earlier output in view...
    expect(conversation(requests[2])).not.toContain(NEEDLE);
    // ...and the project-scope grep finds it in the first session, named with its start date.
    const result = requests[3].messages.find((m) => m.role === "toolResult" && m.toolName === "context_grep");
    expect(
      result,
      `${callLog(requests)}\n${JSON.stringify(requests[3].messages.filter((m) => m.role !== "system")).slice(0, 3000)}`,
    ).toBeDefined();
    expect(result?.role === "toolResult" && result.isError).toBe(false);
    const text = JSON.stringify(result?.content);
    expect(text).toContain(NEEDLE);
    expect(text).toContain(`session ${first.sessionId} (started ${started})`);
    await c.finish();
  });
});
