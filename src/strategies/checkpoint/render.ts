// Renders the checkpoint summary: introduction, opaque base, spans oldest first, retained startup reads,
// annotated file lists, and the evidence boundary before Pi's verbatim tail. Pure string work; no I/O.
import type { FileLine } from "../shared/file-evidence.ts";
import type { CheckpointSpan, SpanItem } from "./spans.ts";
import { lineSafeJson, BREAK_IN_LINE } from "../../log/display.ts";

/**
 * The introduction, identical in every checkpoint so the prefix up to each span stays byte-stable.
 * It says once what was removed and how to get it back, so no per-call note is needed.
 */
export const INTRODUCTION: readonly string[] = [
  "[context-ledger checkpoint]",
  'Earlier turns of this conversation were compacted without being summarized. In the spans below, user messages and assistant prose are copied word for word, except where a span says trimmed="true".',
  "Each tool call is reduced to one line ending in ok, error or unknown. That label is the tool's own status, not proof that the work behind it succeeded.",
  "Removed here: tool outputs (except the startup reads retained below), assistant thinking, and the bodies of custom messages (shown as type stubs).",
  "Nothing was deleted from the session. To recover a specific detail, call context_lookup with a question; the direct fallbacks context_grep, context_list_entries and context_show_entry take the entry ids shown in square brackets.",
];

/** Note placed in every span the size cap changed. */
export const TRIM_NOTE =
  "[trimmed: the size cap removed or shortened content in this span; the originals are in the session, recover them with context_show_entry or context_grep]";

/** Header lines of the file lists. */
export const FILES_NOTE =
  "[files] Labels describe what the retained context showed as of this checkpoint, not the live files; shell commands and outside changes are not tracked.";
export const READ_LIST_HEAD = "[read] Files read (unless annotated, no retained read-tool output identified):";
export const MODIFIED_LIST_HEAD = "[modified] Files modified:";

/** The single evidence-boundary warning and the marker that opens the verbatim tail. */
export const EVIDENCE_BOUNDARY =
  "[evidence boundary] Everything above is a record of past work. It does not show current file contents or build and test state; check those before relying on them.";
export const TAIL_MARKER =
  "[verbatim tail] The messages after this summary are the most recent conversation, unchanged.";

/** A span ready to render: the (possibly capped) items and whether the cap changed it. */
export interface RenderableSpan {
  span: CheckpointSpan;
  trimmed: boolean;
}

/** A retained startup read ready to render. */
export interface RenderableStartupRead {
  entryId: string;
  path: string;
  offset?: number;
  limit?: number;
  completeness: "full" | "partial" | "uncertain";
  text: string;
}

/**
 * Tags that carry structure in what the model reads: Pi's `<summary>` envelope around the checkpoint and the
 * checkpoint's own blocks. Matched anywhere in a line, in any case and spacing, opening or closing.
 */
const STRUCTURE_TAG = /<(?=\s*\/?\s*(?:summary|span|base|startup-reads?|files)\b)/i;
const STRUCTURE_TAGS = new RegExp(STRUCTURE_TAG.source, "gi");
/** Bracketed markers the renderer writes at the start of a line. */
const STRUCTURE_MARKER =
  /^\s*\[(?:user|assistant|call|custom|fold|shell|branch-summary|message|read|modified|files|trimmed|evidence boundary|verbatim tail|context-ledger)\b/i;
/** How an escaped line starts: a backslash, then the line as a JSON string. */
const ESCAPED_START = '\\"';

/**
 * A copied line (user or assistant text, a fold or base summary, a startup read) as the checkpoint shows it.
 * A line that could close Pi's envelope or pass for checkpoint structure is shown as a backslash followed by the
 * line as a JSON string in which every `<` is written `\u003c`; every other line is shown unchanged. The rule is
 * reversible ({@link unescapeLine}): lines that already start with a backslash and a quote are escaped too.
 */
export function escapeLine(line: string): string {
  // A line holding another line break (U+2028, NEL, VT, FF, a lone CR) reads as two lines: the second could pose as structure.
  const unsafe =
    line.startsWith(ESCAPED_START) ||
    STRUCTURE_TAG.test(line) ||
    STRUCTURE_MARKER.test(line) ||
    BREAK_IN_LINE.test(line) ||
    (line !== "" && TEMPLATE_LINES.has(line));
  return unsafe ? `\\${lineSafeJson(JSON.stringify(line)).replace(/</g, "\\u003c")}` : line;
}

/** The original of a copied line: the inverse of {@link escapeLine}. */
export function unescapeLine(line: string): string {
  return line.startsWith(ESCAPED_START) ? (JSON.parse(line.slice(1)) as string) : line;
}

/**
 * A generated line that quotes data (an argument, a path, an id): a `<` opening a structure tag is written
 * `\u003c`, which reads back as `<` from the JSON-quoted value it sits in.
 */
export function neutralizeTags(line: string): string {
  return line.replace(STRUCTURE_TAGS, "\\u003c");
}

function attr(name: string, value: string | number | null | undefined): string {
  return value === null || value === undefined ? "" : ` ${name}=${neutralizeTags(JSON.stringify(String(value)))}`;
}

/** Lines of one item as rendered: the head with tags neutralized, the copied body escaped where needed. */
export function itemLines(item: SpanItem): string[] {
  return [neutralizeTags(item.head), ...item.body.map(escapeLine)];
}

/** Lines of one span block. */
export function spanLines({ span, trimmed }: RenderableSpan): string[] {
  const open = `<span${attr("n", span.n)}${attr("from", span.from)}${attr("through", span.through)}${trimmed ? ' trimmed="true"' : ""}>`;
  const lines = [open];
  if (trimmed) lines.push(TRIM_NOTE);
  for (const item of span.items) lines.push(...itemLines(item));
  lines.push("</span>");
  return lines;
}

/** Lines of an inherited summary that is shown as is (a model summary or another strategy's checkpoint). */
export function baseLines(entryId: string, summary: string): string[] {
  return [`<base${attr("entry", entryId)}>`, ...summary.split("\n").map(escapeLine), "</base>"];
}

/** Lines of the retained startup reads. */
export function startupReadLines(reads: readonly RenderableStartupRead[]): string[] {
  if (reads.length === 0) return [];
  const lines = ["<startup-reads>"];
  for (const read of reads) {
    lines.push(
      `<startup-read${attr("entry", read.entryId)}${attr("path", read.path)}${attr("offset", read.offset)}${attr("limit", read.limit)}${attr("read", read.completeness)}>`,
      ...read.text.split("\n").map(escapeLine),
      "</startup-read>",
    );
  }
  lines.push("</startup-reads>");
  return lines;
}

function fileLine(kind: "read" | "modified", line: FileLine): string {
  return `[${kind}] ${neutralizeTags(JSON.stringify(line.path))}${line.annotation ? ` (${line.annotation})` : ""}`;
}

/** Lines of the annotated read and modified lists. */
export function fileListLines(read: readonly FileLine[], modified: readonly FileLine[]): string[] {
  if (read.length === 0 && modified.length === 0) return [];
  const lines = ["<files>", FILES_NOTE];
  if (read.length > 0) lines.push(READ_LIST_HEAD, ...read.map((line) => fileLine("read", line)));
  if (modified.length > 0) lines.push(MODIFIED_LIST_HEAD, ...modified.map((line) => fileLine("modified", line)));
  lines.push("</files>");
  return lines;
}

/** Everything a checkpoint summary is assembled from. */
export interface SummaryParts {
  base?: { entryId: string; summary: string };
  spans: readonly RenderableSpan[];
  startupReads: readonly RenderableStartupRead[];
  read: readonly FileLine[];
  modified: readonly FileLine[];
}

/** The head of the summary: introduction and base. Its bytes depend only on the base. */
export function headLines(base: SummaryParts["base"]): string[] {
  const lines = [...INTRODUCTION, ""];
  if (base) lines.push(...baseLines(base.entryId, base.summary), "");
  return lines;
}

/** The foot of the summary: startup reads, file lists and the evidence boundary. */
export function footLines(parts: Pick<SummaryParts, "startupReads" | "read" | "modified">): string[] {
  const lines: string[] = [];
  const reads = startupReadLines(parts.startupReads);
  if (reads.length) lines.push(...reads, "");
  const files = fileListLines(parts.read, parts.modified);
  if (files.length) lines.push(...files, "");
  lines.push(EVIDENCE_BOUNDARY, TAIL_MARKER);
  return lines;
}

/** Lines of all spans, each followed by a blank line. */
export function spansLines(spans: readonly RenderableSpan[]): string[] {
  const lines: string[] = [];
  for (const span of spans) lines.push(...spanLines(span), "");
  return lines;
}

/** The complete summary text, in envelope order. */
export function renderSummary(parts: SummaryParts): string {
  return [...headLines(parts.base), ...spansLines(parts.spans), ...footLines(parts)].join("\n");
}

const TEMPLATE_LINES: ReadonlySet<string> = new Set([
  ...INTRODUCTION,
  TRIM_NOTE,
  FILES_NOTE,
  READ_LIST_HEAD,
  MODIFIED_LIST_HEAD,
  EVIDENCE_BOUNDARY,
  TAIL_MARKER,
  "",
]);
const TAG_LINE = /^<\/?(span|base|startup-reads?|files)( [a-z]+="(?:[^"\\]|\\.)*")*>$/;
const MARKER_LINE =
  /^\[(user|assistant|call|custom|fold|shell|branch-summary|message|read|modified)([ ;][^\]\n]*)?\]( .*)?$/;

/**
 * True for lines the renderer generates (template text, tags, item heads, file-list lines). Every other
 * line of a summary must equal a source line byte for byte: that is the verbatim-fidelity invariant.
 */
export function isGeneratedLine(line: string): boolean {
  return TEMPLATE_LINES.has(line) || TAG_LINE.test(line) || MARKER_LINE.test(line);
}
