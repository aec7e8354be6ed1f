// Mechanical rendering of the active branch into transcript lines, kept as an incremental index: one rendered
// block per entry plus an authoritative entry/section map. Pure: no I/O, no clocks; entries come in as data.
//
// The index is a mutable, append-only structure rather than an immer value: it grows by one block per session
// entry (50k+ on long sessions) and is rebuilt from the branch whenever in doubt, so copy-on-write would only
// add cost. Only this module mutates it.
import { walkParents } from "../log/branch.ts";
import { textField, type SessionEntry } from "../log/entries.ts";
import { ownCopy } from "../log/own-copy.ts";
import { RECALL_TOOL_NAMES } from "./attempts.ts";

/** Roles a transcript entry can have (the `role` filter of `context_list_entries`). */
export type TranscriptRole = "user" | "assistant" | "toolResult" | "bash" | "custom" | "compaction" | "branchSummary";

export const TRANSCRIPT_ROLES: readonly TranscriptRole[] = [
  "user",
  "assistant",
  "toolResult",
  "bash",
  "custom",
  "compaction",
  "branchSummary",
];

/** What a section of an entry holds. Every section starts with one marker line. */
export type SectionKind =
  | "header"
  | "text"
  | "thinking"
  | "toolCall"
  | "toolResult"
  | "image"
  | "command"
  | "output"
  | "custom"
  | "summary"
  | "error";

/** One section of a rendered entry: its marker line (0-based within the entry) and that line's text. */
export interface TranscriptSection {
  kind: SectionKind;
  line: number;
  label: string;
  /** Tool name of a `toolCall` section. */
  tool?: string;
}

/**
 * Tools whose calls and results are recall traffic: searching history finds them only when asked to, or a
 * search would keep finding its own earlier queries and results. The timeline is a listing of entries too.
 */
export const RECALL_TRAFFIC_TOOLS: readonly string[] = [...RECALL_TOOL_NAMES, "context_timeline"];

/** One rendered entry. `text` is its lines joined with "\n"; line 0 is the `ENTRY` header. */
export interface TranscriptEntry {
  id: string;
  role: TranscriptRole;
  /** ISO timestamp of the session entry. */
  timestamp: string;
  /** Tool name of a tool result, customType of a custom message. */
  name?: string;
  text: string;
  /** Character offset of each line in `text` (a typed array where the owner compacts the index, as the lab does). */
  lineStarts: readonly number[] | Int32Array;
  /** Sections in line order; the first is the header. */
  sections: TranscriptSection[];
  /** One-line summary for listings. */
  preview: string;
  /** Position of the entry on the branch path (counting entries that render nothing). */
  pathPos: number;
  /**
   * Line ranges `[from, to)` that are recall traffic (see {@link RECALL_TRAFFIC_TOOLS}): a recall tool's call
   * inside an assistant entry, or the whole of a recall tool's result. Absent when there is none.
   */
  recallTraffic?: readonly (readonly [number, number])[];
}

/** The index over the active branch: every path id, and the rendered entries in branch order. */
export interface TranscriptIndex {
  /** All entry ids on the indexed path, root first, including entries that render nothing. */
  path: string[];
  pathPos: Map<string, number>;
  entries: TranscriptEntry[];
  ordinalById: Map<string, number>;
  /** Sum of `text.length` over entries. */
  chars: number;
}

/** An empty index. */
export function createTranscript(): TranscriptIndex {
  return { path: [], pathPos: new Map(), entries: [], ordinalById: new Map(), chars: 0 };
}

/** Id of the last indexed path entry, or null when empty. */
export function transcriptTip(index: TranscriptIndex): string | null {
  return index.path.length ? index.path[index.path.length - 1] : null;
}

/** Number of lines of a rendered entry. */
export function lineCount(entry: TranscriptEntry): number {
  return entry.lineStarts.length;
}

/** Text of line `line` (0-based) of a rendered entry, without its newline. */
export function lineText(entry: TranscriptEntry, line: number): string {
  const start = entry.lineStarts[line];
  const end = line + 1 < entry.lineStarts.length ? entry.lineStarts[line + 1] - 1 : entry.text.length;
  return entry.text.slice(start, end);
}

/** Line (0-based) holding character `offset` of the entry's text. */
export function lineAt(entry: TranscriptEntry, offset: number): number {
  const starts = entry.lineStarts;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Section (from the index, never from the text) that line `line` belongs to. */
export function sectionAt(entry: TranscriptEntry, line: number): TranscriptSection {
  const sections = entry.sections;
  let found = sections[0];
  for (const section of sections) {
    if (section.line > line) break;
    found = section;
  }
  return found;
}

/** True when line `line` is a header or section marker written by the renderer (not entry content). */
export function isMarkerLine(entry: TranscriptEntry, line: number): boolean {
  for (const section of entry.sections) {
    if (section.line === line) return true;
    if (section.line > line) return false;
  }
  return false;
}

/** Append the next branch entry (a child of the current tip). */
export function appendEntry(index: TranscriptIndex, entry: SessionEntry): void {
  if (index.pathPos.has(entry.id)) return;
  const pathPos = index.path.length;
  index.pathPos.set(entry.id, pathPos);
  index.path.push(entry.id);
  const rendered = renderEntry(entry, pathPos);
  if (!rendered) return;
  index.ordinalById.set(rendered.id, index.entries.length);
  index.entries.push(rendered);
  index.chars += rendered.text.length;
}

/** Cut the index back so that `ancestorId` is the tip (null empties it). Used when /tree moves the leaf. */
export function truncateTo(index: TranscriptIndex, ancestorId: string | null): void {
  const keep = ancestorId === null ? 0 : (index.pathPos.get(ancestorId) ?? -1) + 1;
  if (ancestorId !== null && keep === 0) throw new Error(`truncateTo: ${ancestorId} is not on the indexed path`);
  for (let i = keep; i < index.path.length; i++) index.pathPos.delete(index.path[i]);
  index.path.length = keep;
  while (index.entries.length && index.entries[index.entries.length - 1].pathPos >= keep) {
    const dropped = index.entries.pop() as TranscriptEntry;
    index.ordinalById.delete(dropped.id);
    index.chars -= dropped.text.length;
  }
}

/** What {@link syncTranscript} did. */
export interface SyncResult {
  appended: number;
  /** Entries dropped because the leaf moved off the indexed path. */
  dropped: number;
}

/**
 * Bring the index to the branch ending at `leafId`, walking parent links back only until a known path entry,
 * so a sync costs the number of new entries, not the branch length. `getEntry` is the session's lookup.
 */
export function syncTranscript(
  index: TranscriptIndex,
  leafId: string | null,
  getEntry: (id: string) => SessionEntry | undefined,
): SyncResult {
  const fresh: SessionEntry[] = [];
  let anchor: string | null = null;
  // A broken parent chain (a missing entry, an id-less line, a cycle) ends the branch, as Pi's own walk does.
  // An id already on the indexed path is the anchor: the walk ends there without reading it.
  const lookup = (id: string): SessionEntry | undefined => {
    if (!index.pathPos.has(id)) return getEntry(id);
    anchor = id;
    return undefined;
  };
  walkParents(leafId, lookup, (entry) => void fresh.push(entry));
  const before = index.path.length;
  truncateTo(index, anchor);
  const dropped = before - index.path.length;
  for (let i = fresh.length - 1; i >= 0; i--) appendEntry(index, fresh[i]);
  return { appended: fresh.length, dropped };
}

/** Build an index from a whole branch (root first). */
export function buildTranscript(branch: readonly SessionEntry[]): TranscriptIndex {
  const index = createTranscript();
  for (const entry of branch) appendEntry(index, entry);
  return index;
}

/** Rendered entry by id (active branch only). */
export function findEntry(index: TranscriptIndex, id: string): TranscriptEntry | undefined {
  const ordinal = index.ordinalById.get(id);
  return ordinal === undefined ? undefined : index.entries[ordinal];
}

// ---------------------------------------------------------------------------------------------------------
// Rendering

interface Builder {
  lines: string[];
  sections: TranscriptSection[];
}

function open(b: Builder, kind: SectionKind, label: string): void {
  b.sections.push({ kind, line: b.lines.length, label });
  b.lines.push(label);
}

function body(b: Builder, text: string): void {
  for (const line of text.split("\n")) b.lines.push(line);
}

type Block = Record<string, unknown>;

function imageLabel(block: Block): string {
  const data = typeof block.data === "string" ? block.data : "";
  const mime = typeof block.mimeType === "string" ? block.mimeType : "unknown";
  return `[image] ${mime}, ~${Math.floor((data.length * 3) / 4)} bytes (not shown)`;
}

/** Text and image blocks of user-like content, in order; images become metadata placeholders. */
function userContent(b: Builder, content: unknown, marker: string): void {
  if (typeof content === "string") {
    open(b, "text", marker);
    body(b, content);
    return;
  }
  if (!Array.isArray(content)) return;
  let inText = false;
  for (const block of content as Block[]) {
    if (block?.type === "text") {
      if (!inText) open(b, "text", marker);
      else b.lines.push("");
      body(b, String(block.text ?? ""));
      inText = true;
    } else if (block?.type === "image") {
      open(b, "image", imageLabel(block));
      inText = false;
    }
  }
}

/**
 * Tool arguments, every leaf kept whole: `path: value` for one-line strings and scalars, `path:` followed by the
 * raw lines for multi-line strings, so code and commands stay greppable exactly as written.
 */
function renderArgs(b: Builder, value: unknown, path: string): void {
  if (typeof value === "string") {
    if (value.includes("\n")) {
      b.lines.push(`${path}:`);
      body(b, value);
    } else b.lines.push(`${path}: ${value}`);
    return;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) b.lines.push(`${path}: []`);
    value.forEach((item, i) => renderArgs(b, item, `${path}[${i}]`));
    return;
  }
  if (value && typeof value === "object") {
    const keys = Object.keys(value);
    if (keys.length === 0) b.lines.push(`${path}: {}`);
    for (const key of keys) renderArgs(b, (value as Block)[key], path ? `${path}.${key}` : key);
    return;
  }
  b.lines.push(`${path}: ${value === undefined ? "undefined" : JSON.stringify(value)}`);
}

function assistantContent(b: Builder, message: Block): string[] {
  const calls: string[] = [];
  const content = message.content;
  if (typeof content === "string") {
    open(b, "text", "[text]");
    body(b, content);
  } else if (Array.isArray(content)) {
    for (const block of content as Block[]) {
      switch (block?.type) {
        case "thinking": {
          const thinking = String(block.thinking ?? "");
          if (block.redacted && !thinking) open(b, "thinking", "[thinking] (redacted)");
          else {
            open(b, "thinking", "[thinking]");
            body(b, thinking);
          }
          break;
        }
        case "text":
          open(b, "text", "[text]");
          body(b, String(block.text ?? ""));
          break;
        case "toolCall": {
          const name = String(block.name ?? "?");
          calls.push(name);
          open(b, "toolCall", `[toolCall] ${name} ${String(block.id ?? "")}`.trimEnd());
          b.sections[b.sections.length - 1].tool = name;
          const args = block.arguments;
          if (args && typeof args === "object" && !Array.isArray(args)) renderArgs(b, args, "");
          else renderArgs(b, args, "(arguments)");
          break;
        }
        default:
          break;
      }
    }
  }
  const stop = message.stopReason;
  if ((stop === "error" || stop === "aborted") && typeof message.errorMessage === "string" && message.errorMessage) {
    open(b, "error", `[error] ${stop}`);
    body(b, message.errorMessage);
  }
  return calls;
}

function collapse(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function previewOf(b: Builder, calls: readonly string[]): string {
  const markers = new Set(b.sections.map((s) => s.line));
  for (let i = 1; i < b.lines.length; i++) {
    if (markers.has(i)) continue;
    const line = b.lines[i].trim();
    // A copy: a cut of the line would keep the whole message text it came from alive as long as the index.
    if (line) return ownCopy(collapse(line));
  }
  if (calls.length) return `(tool calls: ${calls.join(", ")})`;
  const image = b.sections.find((s) => s.kind === "image");
  return image ? image.label : "(empty)";
}

/**
 * Render one session entry, or undefined for entries that carry no conversation (settings changes, labels,
 * custom state, context edits, system prompt state) and for bash runs excluded from context.
 */
export function renderEntry(entry: SessionEntry, pathPos = 0): TranscriptEntry | undefined {
  let role: TranscriptRole;
  let name: string | undefined;
  const b: Builder = { lines: [], sections: [] };
  let calls: string[] = [];
  const header = (r: TranscriptRole) => {
    role = r;
    open(b, "header", `ENTRY ${entry.id} ${r} ${entry.timestamp ?? ""}`.trimEnd());
  };

  switch (entry.type) {
    case "message": {
      const message = entry.message as unknown as Block;
      switch (message.role) {
        case "user":
          header("user");
          userContent(b, message.content, "[text]");
          break;
        case "assistant":
          header("assistant");
          calls = assistantContent(b, message);
          break;
        case "toolResult": {
          header("toolResult");
          name = String(message.toolName ?? "");
          open(
            b,
            "toolResult",
            `[toolResult] ${name} ${String(message.toolCallId ?? "")}${message.isError ? " error" : ""}`,
          );
          let first = true;
          for (const block of Array.isArray(message.content) ? (message.content as Block[]) : []) {
            if (block?.type === "text") {
              if (!first) b.lines.push("");
              body(b, String(block.text ?? ""));
              first = false;
            } else if (block?.type === "image") {
              open(b, "image", imageLabel(block));
              first = true;
            }
          }
          if (typeof message.content === "string") body(b, message.content);
          break;
        }
        case "bashExecution": {
          // `!!` runs are kept out of the model's context, so recall keeps them out too.
          if (message.excludeFromContext) return undefined;
          header("bash");
          open(b, "command", "[command]");
          body(b, String(message.command ?? ""));
          const flags = [
            `exit ${message.exitCode === undefined || message.exitCode === null ? "?" : String(message.exitCode)}`,
            message.cancelled ? "cancelled" : "",
            message.truncated ? "truncated" : "",
          ].filter(Boolean);
          open(b, "output", `[output] ${flags.join(", ")}`);
          body(b, String(message.output ?? ""));
          break;
        }
        case "custom":
          header("custom");
          name = String(message.customType ?? "");
          userContent(b, message.content, `[custom] ${name}`);
          break;
        case "compactionSummary":
        case "branchSummary":
          header(message.role === "compactionSummary" ? "compaction" : "branchSummary");
          open(b, "summary", "[summary]");
          body(b, textField(message.summary));
          break;
        default:
          // System messages are prompt state, not conversation; unknown roles carry nothing we can render.
          return undefined;
      }
      break;
    }
    case "custom_message":
      header("custom");
      name = entry.customType;
      userContent(b, entry.content, `[custom] ${entry.customType}`);
      break;
    case "compaction":
      header("compaction");
      open(b, "summary", "[summary]");
      body(b, textField(entry.summary));
      break;
    case "branch_summary":
      header("branchSummary");
      open(b, "summary", "[summary]");
      body(b, textField(entry.summary));
      break;
    default:
      return undefined;
  }

  const traffic = recallTraffic(b, role!, name);
  const lineStarts = new Array<number>(b.lines.length);
  let offset = 0;
  for (let i = 0; i < b.lines.length; i++) {
    lineStarts[i] = offset;
    offset += b.lines[i].length + 1;
  }
  return {
    id: entry.id,
    role: role!,
    timestamp: entry.timestamp ?? "",
    ...(name !== undefined ? { name } : {}),
    text: b.lines.join("\n"),
    lineStarts,
    sections: b.sections,
    preview: previewOf(b, calls),
    pathPos,
    ...(traffic.length ? { recallTraffic: traffic } : {}),
  };
}

/** Line ranges of a rendered entry that are recall traffic: a recall tool's result whole, or its calls. */
function recallTraffic(b: Builder, role: TranscriptRole, name: string | undefined): [number, number][] {
  if (role === "toolResult")
    return name !== undefined && RECALL_TRAFFIC_TOOLS.includes(name) ? [[0, b.lines.length]] : [];
  const ranges: [number, number][] = [];
  b.sections.forEach((section, i) => {
    if (section.kind !== "toolCall" || !RECALL_TRAFFIC_TOOLS.includes(section.tool ?? "")) return;
    ranges.push([section.line, b.sections[i + 1]?.line ?? b.lines.length]);
  });
  // A reply that only called recall tools is traffic as a whole, header included.
  const covered = ranges.reduce((n, [from, to]) => n + to - from, 0);
  return ranges.length && covered === b.lines.length - 1 ? [[0, b.lines.length]] : ranges;
}

/** True when line `line` of the entry is recall traffic. */
export function isRecallTraffic(entry: TranscriptEntry, line: number): boolean {
  for (const [from, to] of entry.recallTraffic ?? []) if (line >= from && line < to) return true;
  return false;
}
