// "Needed later": what the agent's own later actions show it needed. One extractor, the same for every row,
// finds items (paths, identifiers, error names and codes, numbers, commands) in every message; an item is
// needed at an act when it first appeared before the act and the agent uses it again in a later tool call
// or text. The lab then asks whether each needed item is visible in the row's view right after the act.
// Deterministic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";
import { ownCopy } from "../log/own-copy.ts";
import { type Probe, relativeToCwd, viewText } from "./probes.ts";
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
const ITEM = new RegExp(
  [
    // URLs, then paths: absolute, home, ./ or ../, or relative with at least one slash.
    String.raw`(?<url>https?://[^\s"'<>()\[\]{}\x60]+)`,
    String.raw`(?<path>(?:~|\.{1,2})?/[\w.@+-]+(?:/[\w.@+-]+)*|(?<![\w.@+-])[\w.@+-]+(?:/[\w.@+-]+)+|\b[\w-]+(?:\.[\w-]+)*\.(?:${EXTENSIONS})\b)`,
    // Error names and codes: TypeError, AbortException, ENOENT, ERR_MODULE_NOT_FOUND, TS2345.
    String.raw`(?<error>\b[A-Z][A-Za-z]*(?:Error|Exception)\b|\bE[A-Z]{3,}\b|\bERR_[A-Z0-9_]+\b|\bTS\d{4,5}\b)`,
    // Identifiers with inner structure: camelCase, PascalCase with a second capital, snake_case, CONSTANT_CASE.
    String.raw`(?<identifier>\b[A-Za-z_$][\w$]*(?:[a-z0-9][A-Z]|[A-Za-z0-9]_[A-Za-z0-9])[\w$]*\b)`,
    // Hex ids (commit hashes and the like): 7 to 40 hex digits holding both a digit and a letter.
    String.raw`(?<hex>\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b)`,
    // Numbers: dotted (versions, decimals) or of three or more digits.
    String.raw`(?<number>\b\d+(?:\.\d+)+\b|\b\d{3,}\b)`,
  ].join("|"),
  "g",
);

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
/** Tokens longer than MAX_TOKEN, found from their first character only (the lookbehind), so each is read once. */
const LONG_TOKEN = new RegExp(String.raw`(?<![^\s"'<>()\[\]{}\x60])[^\s"'<>()\[\]{}\x60]{${MAX_TOKEN + 1},}`, "g");

/** Trailing punctuation a sentence adds to a path or URL. */
function trimTrailing(text: string): string {
  return text.replace(/[.,:;!?]+$/, "");
}

/** What extractItems read, for the linearity check: characters given to the item expression, and in how many pieces. */
export interface ExtractWork {
  /** Characters of the text given to the item expression (long tokens left out). */
  scanned: number;
  /** Characters of the long tokens skipped. */
  skipped: number;
}

/** Items in a text, in order, duplicates included. `work`, when given, adds up what was read. */
export function extractItems(text: string, cwd = "", work?: ExtractWork): Item[] {
  const out: Item[] = [];
  let from = 0;
  // The text between long tokens is given to the item expression as it is: no item crosses a token break, so
  // leaving a long token out changes nothing on either side of it.
  for (const long of text.matchAll(LONG_TOKEN)) {
    itemsIn(text.slice(from, long.index), cwd, out);
    if (work) {
      work.scanned += long.index - from;
      work.skipped += long[0].length;
    }
    from = long.index + long[0].length;
  }
  itemsIn(from === 0 ? text : text.slice(from), cwd, out);
  if (work) work.scanned += text.length - from;
  return out;
}

// A relative path right where a name with a `$` ends ("a$bC+x/y"): the one case where the expression's start
// rule above would skip a position the unbounded scan tried, because the name began before the run of path
// characters it ends in. Tried there, anchored, the same way the scan did.
const PATH_AT = /(?:~|\.{1,2})?\/[\w.@+-]+(?:\/[\w.@+-]+)*|[\w.@+-]+(?:\/[\w.@+-]+)+/y;

function itemsIn(text: string, cwd: string, out: Item[]): void {
  ITEM.lastIndex = 0;
  for (let match = ITEM.exec(text); match; match = ITEM.exec(text)) {
    const g = match.groups!;
    if (g.url) push(out, { kind: "path", text: trimTrailing(g.url) });
    else if (g.path) pushPath(out, g.path, cwd);
    else if (g.error) push(out, { kind: "error", text: g.error });
    else if (g.identifier || g.hex) push(out, { kind: "identifier", text: g.identifier ?? g.hex });
    else if (g.number) push(out, { kind: "number", text: g.number });
    if (g.identifier?.includes("$")) {
      PATH_AT.lastIndex = ITEM.lastIndex;
      const path = PATH_AT.exec(text);
      if (path) {
        pushPath(out, path[0], cwd);
        ITEM.lastIndex = PATH_AT.lastIndex;
      }
    }
  }
}

function pushPath(out: Item[], raw: string, cwd: string): void {
  const path = trimTrailing(raw);
  // A lone "/" or "./" and paths without a letter (dates like 12/05/2024, fractions) carry nothing.
  if (/[A-Za-z]/.test(path)) push(out, { kind: "path", text: relativeToCwd(path, cwd) ?? path });
}

function push(out: Item[], item: Item): void {
  if (item.text.length <= MAX_ITEM && (item.kind === "number" || item.kind === "error" || item.text.length >= MIN_ITEM))
    out.push(item);
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
  if (message.role !== "assistant") return "";
  const parts: string[] = [];
  for (const block of message.content ?? []) {
    if (block.type === "text") parts.push(block.text);
    else if (block.type === "toolCall") collectStrings(block.arguments, parts);
  }
  return parts.join("\n");
}

function collectStrings(value: unknown, out: string[]): void {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) collectStrings(v, out);
  else if (value && typeof value === "object") for (const v of Object.values(value)) collectStrings(v, out);
}

/** Every item a message holds (any role, all of its text), for first appearances. */
export function messageItems(message: AgentMessage, cwd: string): Item[] {
  const items = extractItems(viewText([message]), cwd);
  for (const command of commandsOf(message)) items.push({ kind: "command", text: command });
  return items;
}

/** The items an agent's message uses: extracted from its own text and tool-call arguments, plus its commands. */
export function usedItems(message: AgentMessage, cwd: string): Item[] {
  const items = extractItems(agentText(message), cwd);
  for (const command of commandsOf(message)) items.push({ kind: "command", text: command });
  return items;
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

const key = (item: Item) => `${item.kind}\u0000${item.text}`;

/**
 * Every item the agent uses again after it first appeared, with its span (first, lastUse]. An act before the
 * request at position p needs the items with first < p <= lastUse. Sorted by first appearance.
 */
export function neededItems(branch: readonly SessionEntry[], cwd = ""): NeededItem[] {
  const byKey = new Map<string, NeededItem>();
  branch.forEach((entry, position) => {
    for (const message of visibleMessages(entry)) {
      // Uses first: an item an assistant message both introduces and uses is not needed "later".
      if (message.role === "assistant") {
        for (const item of usedItems(message, cwd)) {
          const known = byKey.get(key(item));
          if (known && known.first < position) known.lastUse = position;
        }
      }
      for (const item of messageItems(message, cwd)) {
        const k = key(item);
        // An own copy: items are cut from a joined copy of the message text, which would otherwise stay alive with them.
        if (!byKey.has(k))
          byKey.set(k, {
            ...item,
            text: ownCopy(item.text),
            first: position,
            firstEntryId: entry.id,
            lastUse: -1,
            index: -1,
          });
      }
    }
  });
  const needed = [...byKey.values()].filter((item) => item.lastUse > item.first);
  needed.forEach((item, i) => (item.index = i));
  return needed;
}

/** The items needed at branch position `position`, in order of first appearance. */
export function neededAt(items: readonly NeededItem[], position: number): NeededItem[] {
  const out: NeededItem[] = [];
  for (const item of items) {
    if (item.first >= position) break;
    if (item.lastUse >= position) out.push(item);
  }
  return out;
}

/** A needed item as a probe, so the recall check (context_grep in its first entry) applies unchanged. */
export function asProbe(item: NeededItem): Probe {
  return { kind: "path", text: item.text, entryId: item.firstEntryId, index: item.first };
}
