// The working set: the text the agent's later `edit` calls replace. An edit states the exact text it replaces
// (`oldText`, or each entry of `edits[]`), so the agent needed that text in view when it made the call, or it would
// have had to read the file again first. For each row the lab asks, at every request that makes an edit, whether
// the replaced text is in the view the row sends; a miss is priced as the re-read it forces. Names, counts and
// signatures a strategy keeps do not count: only the text itself, or a line the strategy quotes verbatim.
// Deterministic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { posix } from "node:path";
import type { SessionEntry } from "../log/entries.ts";
import { ownCopy } from "../log/own-copy.ts";
import { unescapeLine } from "../strategies/checkpoint/render.ts";
import { QUOTE } from "../strategies/digest/lines.ts";
import { contentHolder, Finder, type MessageText, PatternCounts } from "./finder.ts";
import { messageTokens, type Prices } from "./metrics.ts";
import { messageParts, type TextReading } from "./probes.ts";
import { visibleMessages } from "./row.ts";

/** Shortest replaced text counted (after trimming): shorter ones (`}`, `return x;`) occur everywhere and prove nothing. */
export const MIN_REPLACED = 8;
/** The worst-act figure judges each act on this many replaced texts from the act on (fewer at the session's end). */
export const AFTER_ACT = 10;

/**
 * A text as the edit tool matches it: line breaks as LF and each line without trailing whitespace. Pi's `edit`
 * forgives exactly these differences (it retries a failed match with trailing whitespace stripped), so a read that
 * differs from the replaced text only there showed the agent what it needed. Leading and inner whitespace must
 * match: the tool does not forgive them, and an agent that got the indentation wrong would have needed the file again.
 */
export function normalizeWhitespace(text: string): string {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  for (let i = 0; i < lines.length; i++) lines[i] = lines[i].trimEnd();
  return lines.join("\n");
}

/** Roles whose messages come from the session itself; every other role is text a strategy or Pi wrote. */
const SOURCE_ROLES = new Set(["user", "assistant", "toolResult", "bashExecution"]);

/**
 * Every string inside a value (tool-call arguments, `edits[]` entries included), unescaped, except the texts an edit
 * replaces: they are the agent's claim about the file, not something the file showed it (and after the edit the file
 * no longer holds them), so an edit retried with the same text does not count as having seen it.
 */
function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value && typeof value === "object")
    for (const [key, v] of Object.entries(value)) if (key !== "oldText") collectStrings(v, out);
}

/** The working set's reading of a message: every string of a tool call's arguments but the replaced texts, any summary. */
const WORKING_READING: TextReading = {
  toolArguments: collectStrings,
  summary: (m) => (typeof m.summary === "string" ? m.summary : undefined),
};

/** A line of a strategy's own text as the text it quotes: digest's `  | ` lines, checkpoint's JSON-escaped lines. */
function unquoted(line: string): string {
  if (line.startsWith(QUOTE)) return line.slice(QUOTE.length);
  if (line.startsWith('\\"')) {
    try {
      return unescapeLine(line);
    } catch {
      return line;
    }
  }
  return line;
}

/**
 * What a message shows the agent, as the working set compares it: all of its text (tool-call arguments as the
 * strings they are), whitespace as {@link normalizeWhitespace} leaves it, and, in a message a strategy wrote (a
 * digest, a summary, a checkpoint), each quoted line as the line it quotes. A line cut short by its quote keeps its
 * cut marker, so a text that runs past the cut is not shown.
 */
export function workingText(message: AgentMessage): string {
  return WORKING_TEXT.text(WORKING_TEXT.key(message), WORKING_TEXT.variant?.(message) ?? 0);
}

/**
 * {@link workingText} in two steps, for the finder's memo: the key is the message's raw text, cheap to build (a single
 * string, such as a summary, is its own key and is not copied), and its variant says whether a strategy wrote it (1)
 * or the session did (0); the normalized text is made from the key only when the memo has not seen it.
 */
export const WORKING_TEXT: MessageText = {
  variants: 2,
  variant: (message) => (SOURCE_ROLES.has(String(message.role)) ? 0 : 1),
  // The key reads a shell run's command and output, and any summary, besides the content.
  holder(message) {
    const m = message as unknown as Record<string, unknown>;
    return Array.isArray(m.content) && m.role !== "bashExecution" && typeof m.summary !== "string"
      ? contentHolder(m.content)
      : undefined;
  },
  key: (message) => messageParts(message, WORKING_READING, []).join("\n"),
  text(key, variant) {
    const generated = variant === 1;
    let text = key;
    if (text.includes("\r")) text = text.replace(/\r\n?/g, "\n");
    // Only the lines that change are rebuilt: most lines end in no whitespace and quote nothing, and a long
    // summary split into lines and joined again cost more than searching it.
    let pieces: string[] | undefined;
    let copied = 0;
    for (let start = 0; start <= text.length; ) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      const quoted = generated && (text.startsWith(QUOTE, start) || text.startsWith('\\"', start));
      if (quoted || (end > start && endsInSpace(text, end))) {
        const line = text.slice(start, end);
        (pieces ??= []).push(text.slice(copied, start), (quoted ? unquoted(line) : line).trimEnd());
        copied = end;
      }
      start = end + 1;
    }
    if (!pieces) return text;
    pieces.push(text.slice(copied));
    return pieces.join("");
  },
};

/** True when the character before `end` is one `trimEnd` removes. */
function endsInSpace(text: string, end: number): boolean {
  const code = text.charCodeAt(end - 1);
  if (code < 0x80) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return /\s/.test(text[end - 1]);
}

/** One replaced text of one `edit` call. */
export interface ReplacedText {
  /** Index of the request whose assistant message made the call (requests count assistant messages, from 0). */
  request: number;
  /** Branch position of that assistant message. */
  position: number;
  /** The edited file, resolved against the session's working directory ("" when the call names none). */
  path: string;
  /** The text, normalized ({@link normalizeWhitespace}). */
  text: string;
  /** Pattern id of the text (equal texts share one). */
  pattern: number;
  /**
   * The agent had the text in view before the call, in the uncompacted session. A text it never saw (it typed it
   * from memory, or got it wrong) still counts, as a miss for every row, the ceiling included: every row shares one
   * denominator. It forces no re-read: no view could have kept it, so it costs every row the same, nothing.
   */
  seen: boolean;
  /** Tokens a re-read would bring back: the newest earlier read of the file, else the newest earlier message that held the text. */
  rereadTokens: number;
}

/** The replaced texts of an assistant message's edit calls, with the path each names. */
export function replacedTexts(message: AgentMessage): { path: string; text: string }[] {
  if (message.role !== "assistant" || !Array.isArray(message.content)) return [];
  const out: { path: string; text: string }[] = [];
  for (const block of message.content) {
    if (block?.type !== "toolCall" || !/^edit$/i.test(block.name ?? "")) continue;
    const args = (block.arguments ?? {}) as Record<string, unknown>;
    const path = typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : "";
    if (typeof args.oldText === "string") out.push({ path, text: args.oldText });
    if (Array.isArray(args.edits)) {
      for (const edit of args.edits as unknown[]) {
        const oldText = (edit as { oldText?: unknown } | null)?.oldText;
        if (typeof oldText === "string") out.push({ path, text: oldText });
      }
    }
  }
  return out;
}

function resolvePath(path: string, cwd: string): string {
  if (!path) return "";
  if (path.startsWith("/") || !cwd.startsWith("/")) return posix.normalize(path);
  return posix.join(cwd, path);
}

/** A session's replaced texts, seen or not, and what they need to be measured. */
export class WorkingSet {
  /** Every replaced text of at least {@link MIN_REPLACED} characters, in request order: every row's denominator. */
  readonly texts: readonly ReplacedText[];
  /** The ones the agent had seen before the call, in request order: the most any row can show. */
  readonly seen: readonly ReplacedText[];
  private readonly finder: Finder | undefined;
  /** The texts of each request that has some. */
  private readonly byRequest = new Map<number, ReplacedText[]>();

  /** Scan the replayed branch once: the edits, and which of their texts the agent had seen before each call. */
  constructor(branch: readonly SessionEntry[], cwd = "") {
    const found: Omit<ReplacedText, "seen" | "rereadTokens">[] = [];
    const patternOf = new Map<string, number>();
    let request = 0;
    for (let position = 0; position < branch.length; position++) {
      const entry = branch[position];
      if (entry.type !== "message" || entry.message.role !== "assistant") continue;
      for (const { path, text: raw } of replacedTexts(entry.message)) {
        const text = normalizeWhitespace(raw);
        if (text.trim().length < MIN_REPLACED) continue;
        let pattern = patternOf.get(text);
        if (pattern === undefined) patternOf.set(text, (pattern = patternOf.size));
        found.push({ request, position, path: ownCopy(resolvePath(path, cwd)), text: ownCopy(text), pattern });
      }
      request++;
    }
    if (!found.length) {
      this.texts = [];
      this.seen = [];
      return;
    }
    const finder = new Finder([...patternOf.keys()], WORKING_TEXT);
    this.finder = finder;
    // One pass in branch order: a text is seen when a message before its call held it. The call's own message is
    // looked at after its texts are judged (its arguments hold them).
    const firstSeen = new Int32Array(patternOf.size).fill(-1);
    const holderTokens = new Float64Array(patternOf.size);
    const newestRead = new Map<string, number>();
    const readCalls = new Map<string, string>();
    const texts: ReplacedText[] = [];
    let next = 0;
    for (let position = 0; position < branch.length; position++) {
      for (; next < found.length && found[next].position === position; next++) {
        const text = found[next];
        const seen = firstSeen[text.pattern] >= 0;
        const rereadTokens = newestRead.get(text.path) ?? holderTokens[text.pattern];
        texts.push({ ...text, seen, rereadTokens });
      }
      for (const message of visibleMessages(branch[position])) {
        const tokens = messageTokens(message);
        finder.forEachIn(message, (id) => {
          if (firstSeen[id] < 0) firstSeen[id] = position;
          holderTokens[id] = tokens;
        });
        noteReads(message, cwd, readCalls, newestRead, tokens);
      }
    }
    this.texts = texts;
    this.seen = texts.filter((t) => t.seen);
    for (const text of texts) {
      let list = this.byRequest.get(text.request);
      if (!list) this.byRequest.set(text.request, (list = []));
      list.push(text);
    }
  }

  /** The replaced texts (seen or not) of the edits made at request `request`. */
  at(request: number): readonly ReplacedText[] {
    return this.byRequest.get(request) ?? [];
  }

  /** Counts, per text, of the messages in one view that hold it, kept current as the view changes. */
  tracker(): ViewPresence {
    return new ViewPresence(this.finder);
  }
}

/** Remember the read calls' paths, and at each read result the tokens it sent. */
function noteReads(
  message: AgentMessage,
  cwd: string,
  calls: Map<string, string>,
  newest: Map<string, number>,
  tokens: number,
): void {
  if (message.role === "assistant" && Array.isArray(message.content)) {
    for (const block of message.content) {
      if (block?.type !== "toolCall" || !/^read$/i.test(block.name ?? "")) continue;
      const args = (block.arguments ?? {}) as Record<string, unknown>;
      const path = typeof args.path === "string" ? args.path : typeof args.file_path === "string" ? args.file_path : "";
      if (path) calls.set(block.id, resolvePath(path, cwd));
    }
  } else if (message.role === "toolResult") {
    const path = calls.get(message.toolCallId);
    if (path !== undefined) {
      calls.delete(message.toolCallId);
      newest.set(path, tokens);
    }
  }
}

/** Which replaced texts a view holds: per text, how many of its messages hold it. A view observer. */
export class ViewPresence extends PatternCounts {
  /** True when some message of the view holds the text verbatim. */
  holds(text: ReplacedText): boolean {
    return this.holdsPattern(text.pattern);
  }
}

/** What a row's views kept of the working set. */
export interface WorkingSetFigures {
  /** Replaced texts (the same for every row of a session), and how many the row's view showed at their request. */
  total: number;
  visible: number;
  /** visible / total (1 when there is none): the figure the table, the report and the recommendation use. */
  share: number;
  /**
   * Lowest share, over the row's acts, of the next {@link AFTER_ACT} replaced texts from the act on (each judged on
   * the view at its own request; a never-seen text is a miss here too). Absent when the row never acted before an edit.
   */
  minAfterAct?: number;
  /** Texts not shown, the never-seen ones included. */
  misses: number;
  /**
   * The texts the agent had seen before the call (what the ceiling shows), and the share of those the row showed
   * (visible / seen total, 1 when none): the share with never-seen texts left out, for reference only.
   */
  seen: { total: number; share: number };
  /** The re-reads the misses force (one per file and request), in tokens. */
  rereads: { calls: number; readTokens: number; contextTokens: number };
}

/** One row's tally over a session: the requests it acted before, and each replaced text shown or missed. */
export class WorkingSetTally {
  private readonly acts: number[] = [];
  private readonly shown: number[] = [];
  private readonly requests: number[] = [];
  private visible = 0;
  private seen = 0;
  private calls = 0;
  private readTokens = 0;
  private contextTokens = 0;

  /** The row acted before request `request`. */
  act(request: number): void {
    this.acts.push(request);
  }

  /**
   * The replaced texts of one request, against the view the row sends there (`holds`), whose size is `contextTokens`.
   * A missed text the agent had seen forces one re-read of its file: the read's tokens come back, and the row's
   * context goes out again. A never-seen text is a miss without a re-read: no row could have kept it.
   */
  request(
    request: number,
    texts: readonly ReplacedText[],
    holds: (text: ReplacedText) => boolean,
    contextTokens: number,
  ): void {
    let reread: Set<string> | undefined;
    for (const text of texts) {
      // A never-seen text is not asked about: a strategy's own lines could join into it by chance, but the agent
      // never had it, so no view kept it for the agent.
      const shown = text.seen && holds(text);
      this.requests.push(request);
      this.shown.push(shown ? 1 : 0);
      if (!text.seen) continue;
      this.seen++;
      if (shown) {
        this.visible++;
        continue;
      }
      // One re-read per file serves every text of that file the request misses.
      const key = text.path || `\u0000${text.pattern}`;
      reread ??= new Set();
      if (reread.has(key)) continue;
      reread.add(key);
      this.calls++;
      this.readTokens += text.rereadTokens;
      this.contextTokens += contextTokens;
    }
  }

  figures(): WorkingSetFigures {
    const total = this.shown.length;
    // Prefix sums of shown texts, then each act's window in one step: linear in acts and texts.
    const prefix = new Int32Array(total + 1);
    for (let i = 0; i < total; i++) prefix[i + 1] = prefix[i] + this.shown[i];
    let min: number | undefined;
    let first = 0;
    for (const act of this.acts) {
      while (first < total && this.requests[first] < act) first++;
      if (first >= total) break;
      const end = Math.min(total, first + AFTER_ACT);
      const share = (prefix[end] - prefix[first]) / (end - first);
      if (min === undefined || share < min) min = share;
    }
    return {
      total,
      visible: this.visible,
      share: total ? this.visible / total : 1,
      ...(min !== undefined ? { minAfterAct: min } : {}),
      misses: total - this.visible,
      seen: { total: this.seen, share: this.seen ? this.visible / this.seen : 1 },
      rereads: { calls: this.calls, readTokens: this.readTokens, contextTokens: this.contextTokens },
    };
  }
}

/** Working-set figures pooled over sessions: every replaced text once, the lowest worst act. */
export function poolWorkingSet(parts: readonly WorkingSetFigures[]): WorkingSetFigures {
  const total = parts.reduce((s, p) => s + p.total, 0);
  const visible = parts.reduce((s, p) => s + p.visible, 0);
  const seen = parts.reduce((s, p) => s + p.seen.total, 0);
  const mins = parts.map((p) => p.minAfterAct).filter((m) => m !== undefined);
  return {
    total,
    visible,
    share: total ? visible / total : 1,
    ...(mins.length ? { minAfterAct: Math.min(...mins) } : {}),
    misses: total - visible,
    seen: { total: seen, share: seen ? visible / seen : 1 },
    rereads: {
      calls: parts.reduce((s, p) => s + p.rereads.calls, 0),
      readTokens: parts.reduce((s, p) => s + p.rereads.readTokens, 0),
      contextTokens: parts.reduce((s, p) => s + p.rereads.contextTokens, 0),
    },
  };
}

/** What a row's re-reads cost: the read's tokens as new input, the re-sent context as cached reads. */
export function rereadCost(figures: WorkingSetFigures, prices: Prices): { units: number; usd: number } {
  const units = figures.rereads.readTokens * prices.input + figures.rereads.contextTokens * prices.cacheRead;
  return { units, usd: (units / 1_000_000) * prices.usdPerMTok };
}

/** One request of a row, for {@link measureWorkingSet}: the view it sends, and whether the row acted just before it. */
export interface RowRequest {
  messages: readonly AgentMessage[];
  acted?: boolean;
}

/**
 * The working set of one row over one session, from the view it sends at each request. `branch` is the replayed
 * branch (the lab's `replayBranch`: the active path without the file's own compactions); `requests[r]` is the view
 * before the r-th assistant message of it. Requests without a view given count as empty views.
 */
export function measureWorkingSet(
  branch: readonly SessionEntry[],
  requests: readonly RowRequest[],
  cwd = "",
): WorkingSetFigures {
  const set = new WorkingSet(branch, cwd);
  const tally = new WorkingSetTally();
  const count = Math.max(requests.length, set.texts.length ? set.texts[set.texts.length - 1].request + 1 : 0);
  for (let r = 0; r < count; r++) {
    const messages = requests[r]?.messages ?? [];
    if (requests[r]?.acted) tally.act(r);
    const texts = set.at(r);
    if (!texts.length) continue;
    const presence = set.tracker();
    let tokens = 0;
    for (const message of messages) {
      presence.added(message);
      tokens += messageTokens(message);
    }
    tally.request(r, texts, (text) => presence.holds(text), tokens);
  }
  return tally.figures();
}
