// The numbered transcript the `planned` strategy plans over: Pi's compactable messages (and the previous
// summary) serialized into lines, each tagged with its provenance. Pure: no I/O, no clock.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { CompactionEntry } from "../../log/entries.ts";
import { pinnedLines } from "./protection.ts";

/**
 * Where a transcript line came from, which decides what may happen to it:
 * - `structure`: a header this serializer wrote (`[user]`, `[tool result: read "a.ts"]`); protected, it keeps
 *   every surviving line attributable to its message and field;
 * - `text`: a line of stored message text, copied byte for byte; deletable;
 * - `pinned`: a text line inside a trusted `<keepContext>` span of user text; protected;
 * - `marker`: `[compacted: N lines removed]` carried from an earlier planned compaction; folds into neighbours.
 */
export type LineKind = "structure" | "text" | "pinned" | "marker";

export interface TranscriptLine {
  text: string;
  kind: LineKind;
}

/** First line of every planned summary. Not numbered, not carried into the next compaction. */
export const INTRO =
  "[planned compaction: earlier conversation kept line for line; [compacted: N lines removed] marks removed runs]";

const MARKER_HEAD = "[compacted: ";
const MARKER_TAIL = " removed]";

/** The marker that stands for `count` removed lines. */
export function markerText(count: number): string {
  return `[compacted: ${count} ${count === 1 ? "line" : "lines"} removed]`;
}

/** `markerText(count).length`, counted without building the text (sizing a plan renders no marker). */
export function markerLength(count: number): number {
  if (!Number.isSafeInteger(count) || count < 0) return markerText(count).length;
  let digits = 1;
  for (let rest = count; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  return MARKER_HEAD.length + digits + (count === 1 ? 5 : 6) + MARKER_TAIL.length;
}

/**
 * Removed-line count of a marker line (`[compacted: N line(s) removed]`, N of 1 to 12 digits), or undefined when the
 * line is not one. Read character by character: every line of every plan is asked, and a match would allocate.
 */
export function markerCount(text: string): number | undefined {
  if (!text.startsWith(MARKER_HEAD)) return undefined;
  let at = MARKER_HEAD.length;
  let count = 0;
  for (let c = text.charCodeAt(at); c >= 48 && c <= 57; c = text.charCodeAt(at)) {
    count = count * 10 + (c - 48);
    at++;
  }
  const digits = at - MARKER_HEAD.length;
  if (digits < 1 || digits > 12 || !text.startsWith(" line", at)) return undefined;
  at += 5;
  if (text.charCodeAt(at) === 115) at++;
  return text.length === at + MARKER_TAIL.length && text.endsWith(MARKER_TAIL) ? count : undefined;
}

/** True when a line is protected from deletion whatever a plan says. */
export function isProtected(line: TranscriptLine): boolean {
  return line.kind === "structure" || line.kind === "pinned";
}

// Headers. The syntax is ours, so a parsed header is trusted only when provenance says the line is structure.
const HEADER = {
  user: "[user]",
  assistant: "[assistant]",
  thinking: "[assistant thinking]",
  assistantError: "[assistant error]",
  bashCommand: "[user bash command]",
  bashOutput: "[user bash output]",
  branchSummary: "[branch summary]",
  earlierSummary: "[earlier summary]",
  /** Placeholder of earlier versions; still parsed so their stored summaries keep their provenance. */
  image: "[image]",
} as const;

/** What a structure line says about the lines after it (up to the next structure line). */
export type Header =
  | {
      kind:
        | "user"
        | "assistant"
        | "thinking"
        | "assistantError"
        | "bashCommand"
        | "bashOutput"
        | "branchSummary"
        | "earlierSummary"
        | "image";
    }
  | { kind: "toolCall"; tool: string }
  | { kind: "toolResult"; tool: string; key?: string; error: boolean }
  | { kind: "custom"; customType: string };

/** Header line to kind (the lines are distinct), so parsing a line allocates nothing when it is not one. */
const HEADER_KIND = new Map(Object.entries(HEADER).map(([kind, line]) => [line as string, kind]));

const TOOL_CALL = /^\[tool call: ([^\s\]]+)\]$/;
const TOOL_RESULT = /^\[tool result: ([^\s\]]+)( ".*")?( error)?\]$/;
const CUSTOM = /^\[custom: ([^\s\]]+)\]$/;
/** `[image: image/png, 2048 bytes, digest 0a1b2c3d4e5f60]`: the placeholder for an image block. */
const IMAGE = /^\[image: [\w.+/-]{1,100}, \d{1,15} bytes, digest [0-9a-f]{14}\]$/;

/** Parse a line this serializer wrote as a header; undefined for anything else. */
export function parseHeader(text: string): Header | undefined {
  const kind = HEADER_KIND.get(text);
  if (kind) return { kind } as Header;
  let match = TOOL_CALL.exec(text);
  if (match) return { kind: "toolCall", tool: match[1] };
  match = TOOL_RESULT.exec(text);
  if (match) {
    let key: string | undefined;
    if (match[2]) {
      try {
        const parsed: unknown = JSON.parse(match[2].slice(1));
        if (typeof parsed === "string") key = parsed;
      } catch {
        // A malformed key only loses the key; the header still attributes the lines.
      }
    }
    return { kind: "toolResult", tool: match[1], key, error: !!match[3] };
  }
  match = CUSTOM.exec(text);
  if (match) return { kind: "custom", customType: match[1] };
  if (IMAGE.test(text)) return { kind: "image" };
  return undefined;
}

/** Parsed headers by line object: a line is never changed once written, and carried lines are read at every plan. */
const HEADERS = new WeakMap<TranscriptLine, Header | null>();

/** `parseHeader(line.text)`, parsed once per line object. */
export function headerOf(line: TranscriptLine): Header | undefined {
  let header = HEADERS.get(line);
  if (header === undefined) {
    header = parseHeader(line.text) ?? null;
    HEADERS.set(line, header);
  }
  return header ?? undefined;
}

/** True for any line this serializer could have generated (header or marker). Used by tests and diagnostics. */
export function isGeneratedLine(text: string): boolean {
  return text === INTRO || markerCount(text) !== undefined || parseHeader(text) !== undefined;
}

/** Lines that would read as structure if data carried them: our headers and markers, and Pi's summary envelope. */
function looksLikeStructure(text: string): boolean {
  // Trailing blanks and carriage returns (CRLF output) are invisible to a reader: `[user]\r` reads as a header too.
  const bare = trimEndBlanks(text);
  return bare === "<summary>" || bare === "</summary>" || isGeneratedLine(bare);
}

/** `text` without trailing spaces, tabs and carriage returns (a no-op, without allocating, on most lines). */
function trimEndBlanks(text: string): string {
  let end = text.length;
  for (let c = text.charCodeAt(end - 1); c === 13 || c === 32 || c === 9; c = text.charCodeAt(end - 1)) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Leading backslashes of a line, counted without allocating. */
function leadingBackslashes(text: string): number {
  let n = 0;
  while (text.charCodeAt(n) === 92) n++;
  return n;
}

/**
 * Reversible escape for data lines. A line that looks like structure, after any run of leading backslashes, gains
 * one more backslash, so no data line is byte-identical to a real header, marker or envelope line; every other line
 * is untouched. `unescapeLine` removes exactly that backslash.
 */
export function escapeLine(text: string): string {
  if (text.length === 0 || (text.charCodeAt(0) !== 91 && text.charCodeAt(0) !== 60 && text.charCodeAt(0) !== 92))
    return text;
  return looksLikeStructure(text.slice(leadingBackslashes(text))) ? `\\${text}` : text;
}

/** Inverse of {@link escapeLine}. */
export function unescapeLine(text: string): string {
  const n = leadingBackslashes(text);
  return n > 0 && looksLikeStructure(text.slice(n)) ? text.slice(1) : text;
}

/** MIME type as it may appear in a placeholder. */
const safeMime = (mime: unknown): string =>
  typeof mime === "string" && /^[\w.+/-]{1,100}$/.test(mime) ? mime : "unknown";

/** Decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  let end = data.length;
  while (end > 0 && data.charCodeAt(end - 1) === 61) end--;
  return Math.floor((end * 3) / 4);
}

/** Placeholder for an image block: MIME type, decoded size and a digest of the data, never the bytes. */
export function imagePlaceholder(block: { data?: unknown; mimeType?: unknown }): string {
  const data = typeof block.data === "string" ? block.data : "";
  return `[image: ${safeMime(block.mimeType)}, ${base64Bytes(data)} bytes, digest ${digestOf(data)}]`;
}

const safeName = (name: string): string => (name ? name.replace(/[^\w.:/-]/g, "_") : "_");

/** The argument that names what a tool acted on, shown in its result header. */
export function keyArgument(args: unknown): string | undefined {
  if (!args || typeof args !== "object") return undefined;
  const a = args as Record<string, unknown>;
  for (const name of ["path", "file_path", "filePath", "command", "pattern", "url", "query"]) {
    const value = a[name];
    if (typeof value === "string" && value) return value.length > 160 ? value.slice(0, 160) : value;
  }
  return undefined;
}

/** JSON with object keys sorted at every depth, so the same arguments always render the same line. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => stableJson(v === undefined ? null : v)).join(",")}]`;
  if (value && typeof value === "object") {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableJson(obj[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

interface CallInfo {
  name: string;
  args: unknown;
}

type Block = Record<string, unknown>;

/** A message's lines, and for a tool result the call its header named (the only input besides the message). */
interface Serialized {
  lines: readonly TranscriptLine[];
  name?: string;
  args?: unknown;
}

/**
 * Lines by message object: a message is serialized in the kept tail at one compaction and in the region at the next,
 * and giving back the same line objects lets the header and key memos recognise it there. Messages are stored facts,
 * never changed once written. Two generations bound the memory: once the newer holds `SERIALIZED_LINES` lines it
 * becomes the older and the older is dropped, so what a compaction serialized is still there at the next one.
 */
const SERIALIZED_LINES = 20_000;
let serialized = new Map<object, Serialized>();
let serializedBefore = new Map<object, Serialized>();
let serializedLines = 0;

/**
 * Forget the serialized messages and the rendered summaries: they belong to the session just replayed, and the lab
 * replays one session after another in one process (see planner.ts, forgetPlannedMemos).
 */
export function forgetTranscripts(): void {
  serialized = new Map();
  serializedBefore = new Map();
  serializedLines = 0;
  RENDERED.clear();
}

/** Messages and summaries the transcript memos hold now (tests check what a finished replay leaves behind). */
export function transcriptsHeld(): number {
  return serialized.size + serializedBefore.size + RENDERED.size;
}

function serializedOf(message: object): Serialized | undefined {
  return serialized.get(message) ?? serializedBefore.get(message);
}

function rememberSerialized(message: object, entry: Serialized): void {
  if (serializedLines + entry.lines.length > SERIALIZED_LINES) {
    serializedBefore = serialized;
    serialized = new Map();
    serializedLines = 0;
  }
  serialized.set(message, entry);
  serializedLines += entry.lines.length;
}

/** Serializes messages into provenance-tagged lines. */
class Writer {
  readonly lines: TranscriptLine[];
  private readonly calls: ReadonlyMap<string, CallInfo>;

  /** `lines`: where to append (the writer's own list unless given one, like the prior summary's lines). */
  constructor(calls: ReadonlyMap<string, CallInfo>, lines: TranscriptLine[] = []) {
    this.calls = calls;
    this.lines = lines;
  }

  structure(text: string): void {
    this.lines.push({ text, kind: "structure" });
  }

  /** Data lines: escaped so none can pass for a header, a marker or the summary envelope. */
  text(text: string): void {
    for (const line of text.split("\n")) this.lines.push({ text: escapeLine(line), kind: "text" });
  }

  /** Text and image blocks; `trusted` turns on `<keepContext>` recognition (user text only). */
  content(content: unknown, trusted: boolean): void {
    if (typeof content === "string") {
      this.texts([content], trusted);
      return;
    }
    if (!Array.isArray(content)) return;
    // Consecutive text blocks are pinned as one run so a span may cross block boundaries.
    let run: string[] = [];
    for (const block of content as Block[]) {
      if (block?.type === "text" && typeof block.text === "string") run.push(block.text);
      else if (block?.type === "image") {
        this.texts(run, trusted);
        run = [];
        this.structure(imagePlaceholder(block));
      }
    }
    this.texts(run, trusted);
  }

  private texts(texts: readonly string[], trusted: boolean): void {
    if (!texts.length) return;
    const lines = texts.flatMap((t) => t.split("\n"));
    const pins = trusted ? pinnedLines(lines) : undefined;
    lines.forEach((line, i) => this.lines.push({ text: escapeLine(line), kind: pins?.[i] ? "pinned" : "text" }));
  }

  message(message: AgentMessage): void {
    const m = message as unknown as Block;
    const call = m.role === "toolResult" ? this.calls.get(String(m.toolCallId)) : undefined;
    const known = typeof message === "object" && message !== null ? serializedOf(message) : undefined;
    if (known && known.name === call?.name && known.args === call?.args) {
      for (const line of known.lines) this.lines.push(line);
      return;
    }
    const from = this.lines.length;
    this.serialize(m);
    if (typeof message === "object" && message !== null)
      rememberSerialized(message, { lines: this.lines.slice(from), name: call?.name, args: call?.args });
  }

  private serialize(m: Block): void {
    switch (m.role) {
      case "user":
        this.structure(HEADER.user);
        this.content(m.content, true);
        break;
      case "assistant":
        this.assistant(m.content);
        // A failed or aborted reply keeps its error text: it often is the only record of what went wrong.
        if (typeof m.errorMessage === "string" && m.errorMessage) {
          this.structure(HEADER.assistantError);
          this.text(m.errorMessage);
        }
        break;
      case "toolResult": {
        const call = this.calls.get(String(m.toolCallId));
        const tool = safeName(String(m.toolName ?? call?.name ?? ""));
        const key = keyArgument(call?.args);
        this.structure(
          `[tool result: ${tool}${key !== undefined ? ` ${JSON.stringify(key)}` : ""}${m.isError ? " error" : ""}]`,
        );
        this.content(m.content, false);
        break;
      }
      case "bashExecution":
        // `!!` commands never reach the model; they stay out of the plan and the summary too.
        if (m.excludeFromContext) break;
        this.structure(HEADER.bashCommand);
        this.text(String(m.command ?? ""));
        this.structure(HEADER.bashOutput);
        if (typeof m.output === "string" && m.output) this.text(m.output);
        break;
      case "custom":
        this.structure(`[custom: ${safeName(String(m.customType ?? ""))}]`);
        this.content(m.content, false);
        break;
      case "branchSummary":
        this.structure(HEADER.branchSummary);
        this.text(String(m.summary ?? ""));
        break;
      case "compactionSummary":
        this.structure(HEADER.earlierSummary);
        this.text(String(m.summary ?? ""));
        break;
      default:
        // System prompt state and unknown roles are not conversation.
        break;
    }
  }

  private assistant(content: unknown): void {
    if (typeof content === "string") {
      this.structure(HEADER.assistant);
      this.text(content);
      return;
    }
    if (!Array.isArray(content)) return;
    let section: "text" | "thinking" | undefined;
    for (const block of content as Block[]) {
      if (block?.type === "text" && typeof block.text === "string") {
        if (section !== "text") this.structure(HEADER.assistant);
        section = "text";
        this.text(block.text);
      } else if (
        block?.type === "thinking" &&
        typeof block.thinking === "string" &&
        !block.redacted &&
        block.thinking
      ) {
        if (section !== "thinking") this.structure(HEADER.thinking);
        section = "thinking";
        this.text(block.thinking);
      } else if (block?.type === "toolCall") {
        section = undefined;
        this.structure(`[tool call: ${safeName(String(block.name ?? ""))}]`);
        this.lines.push({ text: escapeLine(stableJson(block.arguments ?? {})), kind: "text" });
      }
    }
  }
}

/** Tool calls by id, so a result header can name the file or command it answers. */
export function collectCalls(
  messages: Iterable<AgentMessage>,
  into = new Map<string, CallInfo>(),
): Map<string, CallInfo> {
  for (const message of messages) {
    const m = message as unknown as Block;
    if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
    for (const block of m.content as Block[]) {
      if (block?.type === "toolCall" && typeof block.id === "string")
        into.set(block.id, { name: String(block.name ?? ""), args: block.arguments });
    }
  }
  return into;
}

// ---- provenance of a planned summary -------------------------------------------------------------------------

const KIND_CODE: Record<LineKind, string> = { structure: "s", text: "t", pinned: "p", marker: "m" };
const CODE_KIND: Record<string, LineKind> = { s: "structure", t: "text", p: "pinned", m: "marker" };

/** Run-length code of line kinds, e.g. `s1t12p3m1`. */
export function encodeKinds(kinds: readonly LineKind[]): string {
  // Written as character codes into one buffer, decoded in chunks: a string per run would all be garbage. A run of n
  // lines takes 1 + digits(n) <= 2n characters, so twice the line count always fits.
  const codes = new Uint8Array(kinds.length * 2);
  let length = 0;
  for (let i = 0; i < kinds.length; ) {
    let j = i;
    while (j < kinds.length && kinds[j] === kinds[i]) j++;
    codes[length++] = KIND_CODE[kinds[i]].charCodeAt(0);
    let digits = 1;
    for (let rest = j - i; rest >= 10; rest = Math.floor(rest / 10)) digits++;
    for (let rest = j - i, d = digits - 1; d >= 0; rest = Math.floor(rest / 10), d--)
      codes[length + d] = 48 + (rest % 10);
    length += digits;
    i = j;
  }
  const chunks: string[] = [];
  for (let at = 0; at < length; at += CODE_CHUNK)
    chunks.push(
      String.fromCharCode.apply(null, codes.subarray(at, Math.min(at + CODE_CHUNK, length)) as unknown as number[]),
    );
  return chunks.join("");
}

/** Characters decoded per call in {@link encodeKinds} (a call's arguments are bounded). */
const CODE_CHUNK = 8_192;

/** Inverse of `encodeKinds`; undefined for anything malformed (details come from disk). */
export function decodeKinds(code: unknown): LineKind[] | undefined {
  if (typeof code !== "string" || !/^([stpm]\d{1,9})*$/.test(code)) return undefined;
  const kinds: LineKind[] = [];
  for (const [, c, n] of code.matchAll(/([stpm])(\d+)/g)) {
    const count = Number(n);
    if (count === 0 || kinds.length + count > 10_000_000) return undefined;
    for (let i = 0; i < count; i++) kinds.push(CODE_KIND[c]);
  }
  return kinds;
}

/** A 53-bit string hash (cyrb53), hex. Binds stored provenance to the exact summary text. */
export function digestOf(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

/** Provenance a planned compaction stores in its details. */
export interface Provenance {
  /** `digestOf(summary)`. */
  digest: string;
  /** `encodeKinds` of the summary's lines after the intro. */
  kinds: string;
}

/** A planned summary this process rendered, with the lines it was rendered from (their kinds are its provenance). */
interface RenderedSummary {
  digest: string;
  kinds: string;
  body: readonly TranscriptLine[];
}

/** Recent planned summaries, by text (bounded): the next compaction reads the newest one back as its prior. */
const RENDERED = new Map<string, RenderedSummary>();
const RENDERED_SLOTS = 2;

/** True when a planned summary's body passes the syntax check its provenance implies (see {@link priorLines}). */
function provenanceHolds(body: readonly TranscriptLine[]): boolean {
  return body.every((l) =>
    l.kind === "marker" ? markerCount(l.text) !== undefined : l.kind !== "structure" || headerOf(l) !== undefined,
  );
}

/**
 * Remember a planned summary and the lines it was rendered from, so reading it back as the next compaction's prior
 * is a lookup: the text split at its newlines is the intro and these lines, and their kinds are the stored code.
 * Only a body that would be trusted when read back is kept (a line holding a newline, a header that does not parse,
 * or a body longer than the kind code allows is read back the long way, as before).
 */
export function rememberSummary(summary: string, provenance: Provenance, body: readonly TranscriptLine[]): void {
  const known = RENDERED.get(summary);
  // The same plan remembered again (the lab's two planned rows apply one plan): already checked, only refreshed.
  if (known?.body === body && known.digest === provenance.digest && known.kinds === provenance.kinds) {
    RENDERED.delete(summary);
    RENDERED.set(summary, known);
    return;
  }
  if (body.length > 10_000_000 || body.some((l) => l.text.includes("\n")) || !provenanceHolds(body)) return;
  RENDERED.delete(summary);
  RENDERED.set(summary, { digest: provenance.digest, kinds: provenance.kinds, body });
  // A Map iterates in insertion order: the first key is the least recently remembered.
  if (RENDERED.size > RENDERED_SLOTS) RENDERED.delete(RENDERED.keys().next().value as string);
}

/**
 * The lines of a previous compaction's summary. A planned summary whose provenance still matches its text is
 * re-read with its kinds, so structure and pinned lines stay protected and markers fold forward. Anything else
 * (Pi's prose, a checkpoint, a planned summary whose text no longer matches) is one block of ordinary text:
 * earlier summaries are data, never a source of protection. A summary rendered by this process (see
 * {@link rememberSummary}) is given back as the lines it was rendered from: what {@link readPriorLines} would read.
 */
export function priorLines(entry: CompactionEntry): TranscriptLine[] {
  const summary = typeof entry.summary === "string" ? entry.summary : "";
  const details = entry.details as { v?: unknown; strategy?: unknown; provenance?: Partial<Provenance> } | undefined;
  const rendered = details?.v === 1 && details.strategy === "planned" ? RENDERED.get(summary) : undefined;
  // The same text and provenance as a summary rendered here: readPriorLines would give back its very lines.
  if (rendered && details?.provenance?.digest === rendered.digest && details.provenance.kinds === rendered.kinds)
    return rendered.body.slice();
  return readPriorLines(entry);
}

/** {@link priorLines} the long way: the summary split, its provenance decoded and checked line by line. */
export function readPriorLines(entry: CompactionEntry): TranscriptLine[] {
  const summary = typeof entry.summary === "string" ? entry.summary : "";
  const details = entry.details as { v?: unknown; strategy?: unknown; provenance?: Partial<Provenance> } | undefined;
  if (details?.v === 1 && details.strategy === "planned" && details.provenance?.digest === digestOf(summary)) {
    const lines = summary.split("\n");
    const kinds = decodeKinds(details.provenance.kinds);
    if (lines[0] === INTRO && kinds && kinds.length === lines.length - 1) {
      const body = lines.slice(1).map((text, i) => ({ text, kind: kinds[i] }));
      // Provenance claims are re-checked against the syntax they imply.
      if (provenanceHolds(body)) return body;
    }
  }
  const writer = new Writer(new Map());
  writer.structure(HEADER.earlierSummary);
  if (summary) writer.text(summary);
  return writer.lines;
}

/** Inputs of the serializer. */
export interface TranscriptSource {
  /** The newest compaction whose summary is in view, if any. */
  prior?: CompactionEntry;
  /** Messages Pi would summarize, then the split turn's prefix. */
  messages: readonly AgentMessage[];
  /** Where to look up tool calls whose results appear in `messages` (defaults to `messages`). */
  calls?: ReadonlyMap<string, CallInfo>;
}

/** Serialize the compactable region into numbered lines (line n is `lines[n - 1]`). */
export function buildTranscript(source: TranscriptSource): TranscriptLine[] {
  // The messages' lines are appended to the prior's (a fresh list): no second list for the whole region.
  const writer = new Writer(
    source.calls ?? collectCalls(source.messages),
    source.prior ? priorLines(source.prior) : [],
  );
  for (const message of source.messages) writer.message(message);
  return writer.lines;
}
