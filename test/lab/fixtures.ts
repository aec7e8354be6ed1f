// Hand-built session entries for the lab tests, with sizes chosen so token counts are easy to compute by
// hand (the estimator is ceil(characters / 4)).
import type { SessionEntry } from "../../src/log/entries.ts";

export class Ledger {
  readonly entries: SessionEntry[] = [];
  private n = 0;
  private clock = Date.UTC(2025, 0, 1);

  private push(body: Record<string, unknown>): SessionEntry {
    this.clock += 1000;
    const id = `e${String(this.n++).padStart(3, "0")}`;
    const parentId = this.entries.length ? this.entries[this.entries.length - 1].id : null;
    const entry = { ...body, id, parentId, timestamp: new Date(this.clock).toISOString() } as unknown as SessionEntry;
    if (entry.type === "message") (entry.message as { timestamp: number }).timestamp = this.clock;
    this.entries.push(entry);
    return entry;
  }

  user(text: string): SessionEntry {
    return this.push({ type: "message", message: { role: "user", content: [{ type: "text", text }] } });
  }

  /** An assistant step calling one tool (`read` of `path` by default), then its result. */
  call(
    output: string,
    args: Record<string, unknown> = { path: "a.ts" },
    name = "read",
    isError = false,
  ): { call: SessionEntry; result: SessionEntry } {
    const toolCallId = `call${this.n}`;
    const call = this.push({
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "toolCall", id: toolCallId, name, arguments: args }],
        api: "x",
        provider: "x",
        model: "x",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "toolUse",
      },
    });
    const result = this.push({
      type: "message",
      message: { role: "toolResult", toolCallId, toolName: name, content: [{ type: "text", text: output }], isError },
    });
    return { call, result };
  }

  say(text: string): SessionEntry {
    return this.push({
      type: "message",
      message: {
        role: "assistant",
        content: [{ type: "text", text }],
        api: "x",
        provider: "x",
        model: "x",
        usage: {
          input: 0,
          output: 0,
          cacheRead: 0,
          cacheWrite: 0,
          totalTokens: 0,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
        },
        stopReason: "stop",
      },
    });
  }

  bash(command: string, output: string, exitCode = 0): SessionEntry {
    return this.push({
      type: "message",
      message: { role: "bashExecution", command, output, exitCode, cancelled: false, truncated: false },
    });
  }
}

/** A string of exactly `n` characters. */
export function chars(n: number, fill = "x"): string {
  return fill.repeat(n);
}

/** A session that compacts in a 40k window: `tasks` reads of absolute paths under `cwd`, about 1k tokens each. */
export function readingSession(cwd: string, tasks = 30): Ledger {
  const l = new Ledger();
  for (let i = 0; i < tasks; i++) {
    l.user(`Task ${i}: look at module ${i} and tell me what it does.`);
    l.call(chars(4000, String(i % 10)), { path: `${cwd}/src/mod${i}.ts` });
    l.say(`Module ${i} is fine.`);
  }
  return l;
}

/** JSONL text of a session file: a v3 header with `cwd`, then the entries. */
export function sessionJsonl(entries: readonly SessionEntry[], cwd: string): string {
  const header = JSON.stringify({ type: "session", version: 3, id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd });
  return `${[header, ...entries.map((e) => JSON.stringify(e))].join("\n")}\n`;
}
