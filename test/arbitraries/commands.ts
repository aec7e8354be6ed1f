// Commands a generated session is built from: one record per thing a user, model, extension or Pi can do.
// Commands hold no ids; references to earlier entries are `pick` numbers resolved when the command is
// applied, so every command sequence folds into a valid ledger (no filtering of random arrays).
import fc from "fast-check";
import { codeArb, imageDataArb, pathArb, proseArb, wordsArb } from "./text.ts";

/** How a tool call ends. */
export type ToolOutcome = "ok" | "error" | "image";

/** One tool call of an assistant step, with the result it will get. */
export interface ToolCallSpec {
  name: string;
  args: Record<string, string>;
  outcome: ToolOutcome;
  output: string;
  image: string;
}

/** Milliseconds the session clock advances before the command (0 gives timestamp collisions on purpose). */
interface Timed {
  dt: number;
}

export type LedgerCommand =
  | (Timed & {
      kind: "user";
      text: string;
      image?: string;
      asString: boolean /** Wrap the text in a `<keepContext>` span (the user pins it). */;
      keep?: boolean;
    })
  | (Timed & {
      kind: "assistant";
      thinking?: string;
      text?: string;
      calls: ToolCallSpec[];
      /** Stop reason when the step calls no tools. */
      ending: "stop" | "length" | "error" | "aborted";
    })
  | (Timed & {
      kind: "bash";
      command: string;
      output: string;
      exitCode?: number;
      excluded: boolean;
      cancelled: boolean;
    })
  | (Timed & { kind: "customMessage"; customType: string; content: string; asBlocks: boolean; display: boolean })
  | (Timed & { kind: "customState"; customType: string; data: { n: number; note: string } })
  | (Timed & { kind: "label"; pick: number; label?: string })
  | (Timed & { kind: "sessionName"; name: string })
  | (Timed & { kind: "modelChange"; provider: string; modelId: string })
  | (Timed & { kind: "thinkingChange"; level: string })
  | (Timed & { kind: "systemChange"; section: string; value: string | null; addTool?: string })
  | (Timed & { kind: "usage"; tokens: number })
  /**
   * A compaction: Pi's native one (or an extension's retain-none one), or one written by the `checkpoint` or
   * `planned` strategy (`details.v`, `details.strategy`), which a recap message may follow.
   */
  | (Timed & {
      kind: "compaction";
      pick: number;
      retainNone: boolean;
      summary: string;
      strategy?: "checkpoint" | "planned";
      recap?: string;
    })
  /**
   * A tool checkpoint written at `turn_end` by `preserve` or `digest`: an anchored keepDialogue range from the
   * previous checkpoint's end through a step boundary (`pick`: the leaf or an older batch). With `overflow`, the
   * window then overflows and Pi compacts natively, keeping from the first batch after the range.
   */
  | (Timed & {
      kind: "toolCheckpoint";
      strategy: "preserve" | "digest";
      pick: number;
      summary: string;
      overflow: boolean;
    })
  /** `/tree`: move the leaf to an earlier entry (or before the root), optionally leaving a branch summary. */
  | (Timed & { kind: "navigate"; pick: number; toRoot: boolean; summary?: string })
  /** Pi's append-only context edit (omit or replace one earlier entry's content). */
  | (Timed & { kind: "contextEdit"; pick: number; omit: boolean; text: string })
  /** A `context_compact` step followed by our fold summary with its range rule. */
  | (Timed & { kind: "fold"; pick: number; toRoot: boolean; summary: string; sibling?: ToolCallSpec; backup?: string })
  /**
   * Our restore fact: revoke what one fold or compaction on the branch hid (`pick` chooses the act), or with `newest`
   * only the newer part of it (`cut` chooses the boundary among the safe ones).
   */
  | (Timed & { kind: "restore"; pick: number; newest: boolean; cut: number })
  /**
   * Our pin fact (`context-ledger/pin`): pin an entry of the branch (`pick`; any kind, so compactions, labels and
   * state entries are tried too), unpin one that is pinned (`unpin`), or name an id that is not on the branch
   * (`stray`: an unknown id or a prototype key).
   */
  | (Timed & { kind: "pin"; pick: number; unpin: boolean; stray?: string; note?: string })
  /**
   * A manual `/compact` under the preserve strategy: the marker compaction Pi appends (its checkpoint message is left
   * out: a marker is about the cut). It keeps from where the model view starts, or with `stale` from where Pi's
   * newest compaction kept (what an older writer stored), so Pi's request and the view start apart.
   */
  | (Timed & { kind: "marker"; checkpoint: number; stale: boolean; summary: string; strategy?: "digest" });

export type CommandKind = LedgerCommand["kind"];

/** Relative frequency of each command kind; 0 switches a kind off. */
export type CommandWeights = Record<CommandKind, number>;

export const DEFAULT_WEIGHTS: CommandWeights = {
  user: 10,
  assistant: 16,
  bash: 2,
  customMessage: 2,
  customState: 1,
  label: 2,
  sessionName: 1,
  modelChange: 1,
  thinkingChange: 1,
  systemChange: 1,
  usage: 1,
  compaction: 2,
  toolCheckpoint: 2,
  navigate: 2,
  contextEdit: 2,
  fold: 3,
  restore: 2,
  marker: 1,
  pin: 2,
};

const dtArb = fc.oneof(
  { weight: 1, arbitrary: fc.constant(0) },
  { weight: 9, arbitrary: fc.integer({ min: 1, max: 120_000 }) },
);
const pickArb = fc.nat({ max: 1_000_000 });

const toolCallArb: fc.Arbitrary<ToolCallSpec> = fc.record({
  name: fc.constantFrom("read", "bash", "edit", "write", "grep"),
  args: fc.oneof(
    pathArb.map((path) => ({ path })),
    wordsArb(1, 4).map((command) => ({ command })),
    fc.record({ path: pathArb, oldText: wordsArb(1, 3), newText: wordsArb(1, 3) }),
  ),
  outcome: fc.constantFrom<ToolOutcome>("ok", "ok", "ok", "error", "image"),
  output: fc.oneof(codeArb, proseArb),
  image: imageDataArb,
});

function commandArbs(): { [K in CommandKind]: fc.Arbitrary<Extract<LedgerCommand, { kind: K }>> } {
  return {
    user: fc.record(
      {
        kind: fc.constant("user"),
        dt: dtArb,
        text: proseArb,
        image: imageDataArb,
        asString: fc.boolean(),
        keep: fc.constantFrom(false, false, false, false, true),
      },
      { requiredKeys: ["kind", "dt", "text", "asString"] },
    ),
    assistant: fc.record(
      {
        kind: fc.constant("assistant"),
        dt: dtArb,
        thinking: wordsArb(1, 12),
        text: proseArb,
        calls: fc.oneof(
          { weight: 3, arbitrary: fc.constant<ToolCallSpec[]>([]) },
          { weight: 4, arbitrary: fc.array(toolCallArb, { minLength: 1, maxLength: 1 }) },
          { weight: 2, arbitrary: fc.array(toolCallArb, { minLength: 2, maxLength: 4 }) },
        ),
        ending: fc.constantFrom("stop", "stop", "stop", "length", "error", "aborted"),
      },
      { requiredKeys: ["kind", "dt", "calls", "ending"] },
    ),
    bash: fc.record(
      {
        kind: fc.constant("bash"),
        dt: dtArb,
        command: fc.constantFrom("ls", "git status", "npm test", "cat package.json"),
        output: codeArb,
        exitCode: fc.constantFrom(0, 0, 1, 127),
        excluded: fc.boolean(),
        cancelled: fc.constantFrom(false, false, false, true),
      },
      { requiredKeys: ["kind", "dt", "command", "output", "excluded", "cancelled"] },
    ),
    customMessage: fc.record({
      kind: fc.constant("customMessage"),
      dt: dtArb,
      customType: fc.constantFrom("test-ext/note", "other-extension"),
      content: proseArb,
      asBlocks: fc.boolean(),
      display: fc.boolean(),
    }),
    customState: fc.record({
      kind: fc.constant("customState"),
      dt: dtArb,
      customType: fc.constantFrom("test-ext/state", "pi.virtual-model-state"),
      data: fc.record({ n: fc.nat({ max: 100 }), note: wordsArb(0, 3) }),
    }),
    label: fc.record(
      {
        kind: fc.constant("label"),
        dt: dtArb,
        pick: pickArb,
        label: fc.constantFrom("checkpoint-a", "before-refactor", "green", "v2"),
      },
      { requiredKeys: ["kind", "dt", "pick"] },
    ),
    sessionName: fc.record({ kind: fc.constant("sessionName"), dt: dtArb, name: wordsArb(1, 4) }),
    modelChange: fc.record({
      kind: fc.constant("modelChange"),
      dt: dtArb,
      provider: fc.constantFrom("anthropic", "openai"),
      modelId: fc.constantFrom("claude-sonnet-4-5", "claude-opus-4-5", "gpt-5"),
    }),
    thinkingChange: fc.record({
      kind: fc.constant("thinkingChange"),
      dt: dtArb,
      level: fc.constantFrom("off", "low", "medium", "high"),
    }),
    systemChange: fc.record(
      {
        kind: fc.constant("systemChange"),
        dt: dtArb,
        section: fc.constantFrom("skills", "rules", "cwd"),
        value: fc.option(wordsArb(1, 8), { nil: null }),
        addTool: fc.constantFrom("context_timeline", "find", "ls"),
      },
      { requiredKeys: ["kind", "dt", "section", "value"] },
    ),
    usage: fc.record({ kind: fc.constant("usage"), dt: dtArb, tokens: fc.nat({ max: 50_000 }) }),
    compaction: fc.record(
      {
        kind: fc.constant("compaction"),
        dt: dtArb,
        pick: pickArb,
        retainNone: fc.constantFrom(false, false, false, true),
        summary: wordsArb(3, 30),
        strategy: fc.constantFrom("checkpoint", "planned"),
        recap: wordsArb(2, 12),
      },
      { requiredKeys: ["kind", "dt", "pick", "retainNone", "summary"] },
    ),
    toolCheckpoint: fc.record({
      kind: fc.constant("toolCheckpoint"),
      dt: dtArb,
      strategy: fc.constantFrom("preserve", "preserve", "digest"),
      pick: pickArb,
      summary: wordsArb(3, 30),
      overflow: fc.constantFrom(false, false, true),
    }),
    navigate: fc.record(
      {
        kind: fc.constant("navigate"),
        dt: dtArb,
        pick: pickArb,
        toRoot: fc.constantFrom(false, false, false, false, false, true),
        summary: wordsArb(2, 20),
      },
      { requiredKeys: ["kind", "dt", "pick", "toRoot"] },
    ),
    contextEdit: fc.record({
      kind: fc.constant("contextEdit"),
      dt: dtArb,
      pick: pickArb,
      omit: fc.boolean(),
      text: wordsArb(1, 10),
    }),
    fold: fc.record(
      {
        kind: fc.constant("fold"),
        dt: dtArb,
        pick: pickArb,
        toRoot: fc.constantFrom(false, false, false, true),
        summary: wordsArb(3, 40),
        sibling: toolCallArb,
        backup: fc.constantFrom("backup-1", "pre-fold"),
      },
      { requiredKeys: ["kind", "dt", "pick", "toRoot", "summary"] },
    ),
    restore: fc.record({
      kind: fc.constant("restore"),
      dt: dtArb,
      pick: pickArb,
      newest: fc.constantFrom(false, false, true),
      cut: pickArb,
    }),
    pin: fc.record(
      {
        kind: fc.constant("pin"),
        dt: dtArb,
        pick: pickArb,
        unpin: fc.constantFrom(false, false, true),
        stray: fc.constantFrom("__proto__", "constructor", "no-such-entry"),
        note: wordsArb(1, 6),
      },
      { requiredKeys: ["kind", "dt", "pick", "unpin"] },
    ),
    marker: fc.record(
      {
        kind: fc.constant("marker"),
        dt: dtArb,
        checkpoint: fc.integer({ min: 1, max: 9 }),
        stale: fc.constantFrom(false, false, true),
        summary: wordsArb(3, 30),
        strategy: fc.constant("digest"),
      },
      { requiredKeys: ["kind", "dt", "checkpoint", "stale", "summary"] },
    ),
  };
}

/** One command, drawn with the given weights. */
export function commandArb(weights: Partial<CommandWeights> = {}): fc.Arbitrary<LedgerCommand> {
  const merged: CommandWeights = { ...DEFAULT_WEIGHTS, ...weights };
  const arbs = commandArbs();
  const choices = (Object.keys(arbs) as CommandKind[])
    .filter((kind) => merged[kind] > 0)
    .map((kind) => ({ weight: merged[kind], arbitrary: arbs[kind] as fc.Arbitrary<LedgerCommand> }));
  return fc.oneof(...choices);
}
