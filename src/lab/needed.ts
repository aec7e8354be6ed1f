// "Needed later": what the agent's own later actions show it needed. One extractor, the same for every row,
// finds items (paths, identifiers, error names and codes, numbers, commands) in every message; an item is
// needed at an act when it first appeared before the act and the agent uses it again in a later tool call
// or text. The lab then asks whether each needed item is visible in the row's view right after the act.
// Deterministic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { ownCopy } from "../log/own-copy.ts";
import { type Probe, viewParts } from "./probes.ts";
import { visibleMessages } from "./row.ts";

export type NeededKind = "path" | "identifier" | "error" | "number" | "command";

export const NEEDED_KINDS: readonly NeededKind[] = ["path", "identifier", "error", "number", "command"];

/** One extracted item: its kind and its canonical text (a path under the session's cwd is written relative). */
export interface Item {
  kind: NeededKind;
  text: string;
}

// File extensions that make a bare name (no slash) a path: common source, config and document files.
const EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|txt|py|rb|rs|go|java|kt|swift|c|cc|cpp|h|hpp|cs|php|sh|bash|zsh|yml|yaml|toml|ini|cfg|conf|xml|html|htm|css|scss|sql|lock|log|csv|env|vue|svelte|lua|zig|ex|exs|dart|scala|gradle|proto|graphql";

// One left-to-right scan; the first alternative that matches at a position wins, so an identifier inside a
// path or a number inside a version is not counted twice.
//
// Why this is linear: every alternative stays inside one token, a run of characters that are not TOKEN_BREAK
// (white space, quotes, brackets, backticks), so an attempt that starts in a token reads at most to its end.
// The regular expression is only ever given tokens of at most MAX_TOKEN characters (longer ones are data blobs,
// see extractItems), which bounds the work per character by MAX_TOKEN whatever the text. The relative path
// alternative also starts only where a run of path characters starts: started later in the same run it would
// reach the same end and fail the same way, so a long word without a slash is read once, not once per position.
//
// The groups are numbered, not named (see the G_ constants): a match then carries no groups object, and a long
// session's texts give the expression about a million matches.
const ITEM = new RegExp(
  [
    // URLs, then paths: absolute, home, ./ or ../, or relative with at least one slash.
    String.raw`(https?://[^\s"'<>()\[\]{}\x60]+)`,
    String.raw`((?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*|(?<![\w.@+-])[\w.@+-]+(?:/[\w.@+-]+)+|\b[\w-]+(?:\.[\w-]+)*\.(?:${EXTENSIONS})\b)`,
    // Error names and codes: TypeError, AbortException, ENOENT, ERR_MODULE_NOT_FOUND, TS2345.
    String.raw`(\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bE[A-Z]{3,}\b|\bERR_[A-Z0-9_]+\b|\bTS\d{4,5}\b)`,
    // Identifiers with inner structure: camelCase, PascalCase with a second capital, snake_case, CONSTANT_CASE.
    String.raw`(\b[A-Za-z_$][\w$]*(?:[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9])[\w$]*\b)`,
    // Hex ids (commit hashes and the like): 7 to 40 hex digits holding both a digit and a letter.
    String.raw`(\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b)`,
    // Numbers: dotted (versions, decimals) or of three or more digits.
    String.raw`(\b\d+(?:\.\d+)+\b|\b\d{3,}\b)`,
  ].join("|"),
  "g",
);
/** ITEM's groups: one per alternative, in order. */
const G_URL = 1;
const G_PATH = 2;
const G_ERROR = 3;
const G_IDENTIFIER = 4;
const G_HEX = 5;
const G_NUMBER = 6;

/** Longest item kept: longer matches are data blobs, not things an agent carries in mind. */
const MAX_ITEM = 200;
/** Shortest path or identifier kept. */
const MIN_ITEM = 4;
/**
 * Longest token the item expression reads: an item of MAX_ITEM characters and the punctuation around it. A longer
 * run without a break (a hash, a base64 blob, a minified line, a thinking signature) is data, not something an
 * agent carries in mind; it is skipped whole, in one linear scan.
 */
export const MAX_TOKEN = 256;
/** A character that is part of a token: not white space, a quote, a bracket or a backquote. */
const TOKEN_CHAR = String.raw`[^\s"'<>()\[\]{}\x60]`;
/**
 * Tokens longer than MAX_TOKEN, found from their first character only (the lookbehind), so each is read once.
 * Written `{N}` then `*`, not `{N+1,}`: V8 runs the open-ended count with a backtracking stack that grows with
 * the token and overflows at a few million characters; a plain `*` over a character class runs as a tight loop.
 */
const LONG_TOKEN = new RegExp(`(?<!${TOKEN_CHAR})${TOKEN_CHAR}{${MAX_TOKEN + 1}}${TOKEN_CHAR}*`, "g");

/** Trailing punctuation a sentence adds to a path or URL (`.,:;!?`), removed. */
function trimTrailing(text: string): string {
  let end = text.length;
  for (; end > 0; end--) {
    const code = text.charCodeAt(end - 1);
    // . , : ; ! ?
    if (code !== 0x2e && code !== 0x2c && code !== 0x3a && code !== 0x3b && code !== 0x21 && code !== 0x3f) break;
  }
  return end === text.length ? text : text.slice(0, end);
}

/** What extractItems read, for the linearity check: characters given to the item expression, and in how many pieces. */
export interface ExtractWork {
  /** Characters of the text given to the item expression (long tokens left out). */
  scanned: number;
  /** Characters of the long tokens skipped. */
  skipped: number;
}

/** Where items go as they are found: kind and text, in order, duplicates included. */
type ItemSink = (kind: NeededKind, text: string) => void;

/** Items in a text, in order, duplicates included. `work`, when given, adds up what was read. */
export function extractItems(text: string, cwd = "", work?: ExtractWork): Item[] {
  const out: Item[] = [];
  eachItem(text, cwdPrefix(cwd), (kind, item) => out.push({ kind, text: item }), work);
  return out;
}

/** The prefix of a path inside `cwd` (its absolute form and a slash), or "" when no path can be inside it. */
function cwdPrefix(cwd: string): string {
  const base = cwd.replace(/\/+$/, "");
  return base.startsWith("/") ? `${base}/` : "";
}

/** {@link extractItems}, each item given to `sink`; `prefix` is {@link cwdPrefix}'s. */
function eachItem(text: string, prefix: string, sink: ItemSink, work?: ExtractWork): void {
  let from = 0;
  // The text between long tokens is given to the item expression as it is: no item crosses a token break, so
  // leaving a long token out changes nothing on either side of it.
  LONG_TOKEN.lastIndex = 0;
  for (let long = LONG_TOKEN.exec(text); long; long = LONG_TOKEN.exec(text)) {
    itemsIn(text.slice(from, long.index), prefix, sink);
    if (work) {
      work.scanned += long.index - from;
      work.skipped += long[0].length;
    }
    from = LONG_TOKEN.lastIndex;
  }
  itemsIn(from === 0 ? text : text.slice(from), prefix, sink);
  if (work) work.scanned += text.length - from;
}

// A relative path right where a name with a `$` ends ("a$bC+x/y"): the one case where the expression's start
// rule above would skip a position the unbounded scan tried, because the name began before the run of path
// characters it ends in. Tried there, anchored, the same way the scan did.
const PATH_AT = /(?:~|\.{1,2})?\/[\w.@+-]+(?:\/[\w.@+-]+)*|[\w.@+-]+(?:\/[\w.@+-]+)+/y;

function itemsIn(text: string, prefix: string, sink: ItemSink): void {
  ITEM.lastIndex = 0;
  for (let match = ITEM.exec(text); match; match = ITEM.exec(text)) {
    const identifier = match[G_IDENTIFIER];
    if (match[G_URL] !== undefined) keep(sink, "path", trimTrailing(match[G_URL]));
    else if (match[G_PATH] !== undefined) keepPath(sink, match[G_PATH], prefix);
    else if (match[G_ERROR] !== undefined) keep(sink, "error", match[G_ERROR]);
    else if (identifier !== undefined) keep(sink, "identifier", identifier);
    else if (match[G_HEX] !== undefined) keep(sink, "identifier", match[G_HEX]);
    else if (match[G_NUMBER] !== undefined) keep(sink, "number", match[G_NUMBER]);
    if (identifier?.includes("$")) {
      PATH_AT.lastIndex = ITEM.lastIndex;
      const path = PATH_AT.exec(text);
      if (path) {
        keepPath(sink, path[0], prefix);
        ITEM.lastIndex = PATH_AT.lastIndex;
      }
    }
  }
}

function keepPath(sink: ItemSink, raw: string, prefix: string): void {
  const path = trimTrailing(raw);
  // A lone "/" or "./" and paths without a letter (dates like 12/05/2024, fractions) carry nothing. A path strictly
  // inside the cwd is written relative to it (see relativeToCwd).
  if (/[A-Za-z]/.test(path))
    keep(
      sink,
      "path",
      prefix && path.length > prefix.length && path.startsWith(prefix) ? path.slice(prefix.length) : path,
    );
}

function keep(sink: ItemSink, kind: NeededKind, text: string): void {
  if (text.length <= MAX_ITEM && (kind === "number" || kind === "error" || text.length >= MIN_ITEM)) sink(kind, text);
}

/** The commands an assistant message runs (first line of each shell tool call). */
function commandsOf(message: AgentMessage): string[] {
  const out: string[] = [];
  const m = message as unknown as { role: string; content?: unknown; command?: unknown };
  if (m.role === "bashExecution" && typeof m.command === "string") out.push(m.command);
  if (m.role === "assistant" && Array.isArray(m.content)) {
    for (const block of m.content as { type?: string; name?: string; arguments?: Record<string, unknown> }[]) {
      if (
        block?.type === "toolCall" &&
        /^(bash|shell|exec)$/i.test(block.name ?? "") &&
        typeof block.arguments?.command === "string"
      )
        out.push(block.arguments.command);
    }
  }
  return out.map((c) => c.split("\n")[0].trim()).filter((c) => c.length > 0 && c.length <= MAX_ITEM);
}

/** What the agent itself wrote in an assistant message: its text blocks and its tool-call arguments. */
export function agentText(message: AgentMessage): string {
  return agentParts(message).join("\n");
}

/** The pieces of {@link agentText}, in order. */
function agentParts(message: AgentMessage): string[] {
  const parts: string[] = [];
  if (message.role !== "assistant") return parts;
  for (const block of message.content ?? []) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "toolCall") collectStrings(block.arguments, parts);
  }
  return parts;
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) collectStrings(v, out);
}

// Items are read part by part (each piece of text the joined view or agent text is made of): every item lies inside
// one token, a token never spans the line break the parts are joined with, and a part's edges read as that line
// break does to every rule of the expression. A part the agent text and the view text share is then read once.

/** Every item a message holds (any role, all of its text), for first appearances. */
export function messageItems(message: AgentMessage, cwd: string): Item[] {
  const out: Item[] = [];
  const prefix = cwdPrefix(cwd);
  const sink: ItemSink = (kind, text) => out.push({ kind, text });
  for (const part of viewParts(message, [])) eachItem(part, prefix, sink);
  for (const command of commandsOf(message)) out.push({ kind: "command", text: command });
  return out;
}

/** The items an agent's message uses: extracted from its own text and tool-call arguments, plus its commands. */
export function usedItems(message: AgentMessage, cwd: string): Item[] {
  const out: Item[] = [];
  const prefix = cwdPrefix(cwd);
  const sink: ItemSink = (kind, text) => out.push({ kind, text });
  for (const part of agentParts(message)) eachItem(part, prefix, sink);
  for (const command of commandsOf(message)) out.push({ kind: "command", text: command });
  return out;
}

/** An item with the span in which the agent still needs it. */
export interface NeededItem extends Item {
  /** Branch position of the entry where it first appeared (and that entry's id, for recall attribution). */
  first: number;
  firstEntryId: string;
  /** Branch position of the agent's last use after its first appearance. */
  lastUse: number;
  /** Position in the list `neededItems` returns. */
  index: number;
}

/**
 * Every item the agent uses again after it first appeared, with its span (first, lastUse]. An act before the
 * request at position p needs the items with first < p <= lastUse. Sorted by first appearance.
 */
export function neededItems(branch: readonly SessionEntry[], cwd = ""): NeededItem[] {
  const prefix = cwdPrefix(cwd);
  // One map per kind, keyed by the text: no key string is built per item.
  const byKind = new Map<NeededKind, Map<string, NeededItem>>(NEEDED_KINDS.map((kind) => [kind, new Map()]));
  const all: NeededItem[] = [];
  let position = 0;
  let entryId = "";
  const use: ItemSink = (kind, text) => {
    const known = byKind.get(kind)?.get(text);
    if (known && known.first < position) known.lastUse = position;
  };
  const introduce: ItemSink = (kind, text) => {
    const known = byKind.get(kind) as Map<string, NeededItem>;
    if (known.has(text)) return;
    // An own copy: items are cut from the message text, which would otherwise stay alive with them.
    const item = { kind, text: ownCopy(text), first: position, firstEntryId: entryId, lastUse: -1, index: -1 };
    known.set(item.text, item);
    all.push(item);
  };
  // The items of the parts an assistant message's agent text shares with its view text, read for the uses first.
  const shared = new Map<string, (NeededKind | string)[]>();
  const record =
    (out: (NeededKind | string)[]): ItemSink =>
    (kind, text) =>
      out.push(kind, text);
  for (; position < branch.length; position++) {
    const entry = branch[position];
    entryId = entry.id;
    for (const message of visibleMessages(entry)) {
      const commands = commandsOf(message);
      // Uses first: an item an assistant message both introduces and uses is not needed "later".
      if (message.role === "assistant") {
        shared.clear();
        for (const part of agentParts(message)) {
          let found = shared.get(part);
          if (!found) {
            found = [];
            eachItem(part, prefix, record(found));
            shared.set(part, found);
          }
          for (let i = 0; i < found.length; i += 2) use(found[i] as NeededKind, found[i + 1]);
        }
        for (const command of commands) use("command", command);
      }
      for (const part of viewParts(message, [])) {
        const found = shared.size ? shared.get(part) : undefined;
        if (found) for (let i = 0; i < found.length; i += 2) introduce(found[i] as NeededKind, found[i + 1]);
        else eachItem(part, prefix, introduce);
      }
      if (shared.size) shared.clear();
      for (const command of commands) introduce("command", command);
    }
  }
  const needed = all.filter((item) => item.lastUse > item.first);
  needed.forEach((item, i) => (item.index = i));
  return needed;
}

/** True when the item is needed at branch position `position`: it appeared before it and is used at or after it. */
export function isNeededAt(item: NeededItem, position: number): boolean {
  return item.first < position && item.lastUse >= position;
}

/** A needed item as a probe, so the recall check (context_grep in its first entry) applies unchanged. */
export function asProbe(item: NeededItem): Probe {
  return { kind: "path", text: item.text, entryId: item.firstEntryId, index: item.first };
}
