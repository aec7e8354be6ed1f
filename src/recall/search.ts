// Paginated list / grep / show over the transcript index, bounded by result count, characters and scan work,
// with a static safety check for regular expressions. Pure: no I/O; attribution always comes from the index.
import type { RecallLimits } from "./settings.ts";
import {
  isMarkerLine,
  lineAt,
  lineCount,
  lineText,
  sectionAt,
  TRANSCRIPT_ROLES,
  type TranscriptEntry,
  type TranscriptIndex,
  type TranscriptRole,
} from "./transcript.ts";

/** A page of results, or a refusal the model can act on. */
export type SearchOutcome<D> = { ok: true; text: string; details: D; nextCursor?: string } | { ok: false; error: string };

export interface ListParams {
  role?: string;
  cursor?: string;
}
export interface GrepParams {
  pattern: string;
  literal?: boolean;
  context?: number;
  cursor?: string;
}
export interface ShowParams {
  id: string;
  cursor?: string;
}

/**
 * What bounds regex work besides the static check. `bounded` is true when the runtime falls back to a
 * linear-time engine once a match backtracks too much (V8 with its backtrack fallback enabled, which the host
 * switches on): any pattern the static check accepts then runs in time linear in the text it scans.
 */
export interface RegexEngine {
  bounded: boolean;
  /**
   * Starts the time budget of one grep call and returns its check, asked between entries, every 64 lines and
   * before each long-line window: true stops the scan with a continuation cursor. Injected by the host, which
   * owns the clock.
   */
  startBudget?: () => () => boolean;
}

/** Plain backtracking: the static check alone has to keep patterns safe, so it is stricter. */
export const BACKTRACKING_ENGINE: RegexEngine = { bounded: false };

// ---------------------------------------------------------------------------------------------------------
// Cursors: `<kind>:<fingerprint>:<ordinal>:<position>:<anchor id>`. The fingerprint ties a cursor to the
// parameters that produced it; the anchor id detects a branch that changed under it.

export type SearchKind = "list" | "grep" | "show";
const KIND_CODE: Record<SearchKind, string> = { list: "l", grep: "g", show: "s" };

interface Cursor {
  kind: SearchKind;
  fingerprint: string;
  ordinal: number;
  position: number;
  anchor: string;
}

function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, "0");
}

/**
 * Canonical form of a call's parameters without its cursor. Two calls with the same key ask the same
 * question; the lookup budget uses it to tell a page follow from a new query.
 */
export function queryKey(kind: SearchKind, params: object): string {
  const p = params as Record<string, unknown>;
  switch (kind) {
    case "list":
      return JSON.stringify(["list", normalizeRole(p.role) ?? null]);
    case "grep":
      return JSON.stringify(["grep", String(p.pattern ?? ""), p.literal === true, typeof p.context === "number" ? Math.floor(p.context) : 0]);
    case "show":
      return JSON.stringify(["show", String(p.id ?? "")]);
  }
}

function encodeCursor(c: Cursor): string {
  return `${KIND_CODE[c.kind]}:${c.fingerprint}:${c.ordinal}:${c.position}:${c.anchor}`;
}

function decodeCursor(kind: SearchKind, key: string, raw: string): Cursor | string {
  const m = /^([lgs]):([0-9a-f]{8}):(\d+):(\d+):(.+)$/s.exec(raw);
  if (!m || m[1] !== KIND_CODE[kind]) return `invalid cursor ${JSON.stringify(raw)}: pass a cursor exactly as an earlier ${kind} page returned it, or omit it`;
  if (m[2] !== fnv1a(key)) return "this cursor belongs to a different query: repeat the original arguments with it, or omit the cursor to start over";
  return { kind, fingerprint: m[2], ordinal: Number(m[3]), position: Number(m[4]), anchor: m[5] };
}

const STALE = "the branch changed since this cursor was issued (e.g. /tree); run the query again without a cursor";

/** Decode a list/grep cursor and check that the entry it points at is still where it was on the branch. */
function resumeAt(kind: "list" | "grep", key: string, raw: string, index: TranscriptIndex): Cursor | string {
  const cursor = decodeCursor(kind, key, raw);
  if (typeof cursor === "string") return cursor;
  return index.entries[cursor.ordinal]?.id === cursor.anchor ? cursor : STALE;
}

// ---------------------------------------------------------------------------------------------------------
// Regex safety

/**
 * Why a pattern is refused, or undefined when it may run. Refused: backreferences and lookarounds (the
 * linear-time fallback cannot run them, so nothing would bound them), repetition of a group that repeats or
 * branches (exponential backtracking), huge counted repetition, and, without a bounded engine, more than one
 * unbounded quantifier (polynomial backtracking on long lines).
 */
export function checkPattern(pattern: string, engine: RegexEngine, maxLength: number): string | undefined {
  if (pattern.length === 0) return "empty pattern";
  if (pattern.length > maxLength) return `pattern longer than ${maxLength} characters; use a shorter one or literal: true`;
  const linear = engine.bounded;
  interface Frame {
    quantified: boolean;
    alternation: boolean;
  }
  const stack: Frame[] = [{ quantified: false, alternation: false }];
  let unbounded = 0;
  // What the previous atom was, so a following quantifier can be judged.
  let last: { group?: Frame } | undefined;
  let i = 0;
  const quantifierAt = (at: number): { end: number; repeats: boolean; unbounded: boolean; big: boolean } | undefined => {
    const c = pattern[at];
    if (c === "*" || c === "+") return { end: at + 1, repeats: true, unbounded: true, big: false };
    if (c === "?") return { end: at + 1, repeats: false, unbounded: false, big: false };
    if (c === "{") {
      const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(at));
      if (!m) return undefined;
      const min = Number(m[1]);
      const max = m[2] === undefined ? min : m[3] === "" ? Infinity : Number(m[3]);
      return { end: at + m[0].length, repeats: max > 1, unbounded: max === Infinity, big: Math.max(min, max === Infinity ? 0 : max) > 1000 };
    }
    return undefined;
  };
  while (i < pattern.length) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (/[1-9]/.test(next) || next === "k") return "backreferences are not supported; search for the text itself, or use literal: true";
      i += 2;
      last = {};
    } else if (c === "[") {
      let j = i + 1;
      if (pattern[j] === "^") j++;
      if (pattern[j] === "]") j++;
      while (j < pattern.length && pattern[j] !== "]") j += pattern[j] === "\\" ? 2 : 1;
      if (j >= pattern.length) return "unterminated character class";
      i = j + 1;
      last = {};
    } else if (c === "(") {
      if (pattern.startsWith("(?=", i) || pattern.startsWith("(?!", i) || pattern.startsWith("(?<=", i) || pattern.startsWith("(?<!", i)) {
        return "lookaround assertions are not supported; match the surrounding text instead";
      }
      stack.push({ quantified: false, alternation: false });
      if (pattern.startsWith("(?<", i)) {
        const close = pattern.indexOf(">", i);
        if (close < 0) return "unterminated group name";
        i = close + 1;
      } else i += pattern.startsWith("(?:", i) ? 3 : pattern.startsWith("(?", i) ? 2 : 1;
      last = undefined;
      continue;
    } else if (c === ")") {
      if (stack.length === 1) return "unbalanced parenthesis";
      const group = stack.pop() as Frame;
      const parent = stack[stack.length - 1];
      parent.quantified ||= group.quantified;
      i += 1;
      last = { group };
    } else if (c === "|") {
      stack[stack.length - 1].alternation = true;
      i += 1;
      last = undefined;
      continue;
    } else {
      const q = quantifierAt(i);
      if (q) {
        if (!last) return `quantifier at position ${i} has nothing to repeat`;
        if (q.big) return "counted repetition above 1000 is not supported";
        // A repeated group that itself repeats or branches can match one text in exponentially many ways.
        if (q.repeats && last.group && (last.group.quantified || last.group.alternation)) {
          return "nested or alternating repetition such as (a+)+ or (a|ab)* can take exponential time; simplify the pattern or use literal: true";
        }
        if (q.unbounded) unbounded++;
        stack[stack.length - 1].quantified = true;
        i = q.end;
        if (pattern[i] === "?") i++;
        last = undefined;
        continue;
      }
      i += 1;
      last = {};
    }
  }
  if (stack.length !== 1) return "unbalanced parenthesis";
  // Without a linear-time fallback each unbounded quantifier multiplies the worst-case backtracking per line.
  if (!linear && unbounded > 1) return "more than one unbounded quantifier (*, +, {n,}) is not supported by this runtime's regex engine; use literal: true or a tighter pattern";
  return undefined;
}

/**
 * Regex matching is per line, like grep, and a line longer than this is searched in overlapping windows, so
 * one regex execution never sees more than this many characters: even a pattern that backtracks without
 * limit costs at most window² steps per window. Exact-text search has no such limit.
 */
export const REGEX_WINDOW = 2_048;
/** Overlap of consecutive windows: a match up to this long is never split by a window edge. */
export const REGEX_OVERLAP = 256;

type Matcher = { kind: "literal"; needle: string } | { kind: "regex"; re: RegExp };

function compileMatcher(params: GrepParams, engine: RegexEngine, limits: RecallLimits): Matcher | string {
  if (params.literal) return { kind: "literal", needle: params.pattern };
  const refused = checkPattern(params.pattern, engine, limits.maxPatternLength);
  if (refused) return `pattern refused: ${refused}`;
  try {
    return { kind: "regex", re: new RegExp(params.pattern) };
  } catch (error) {
    return `invalid regular expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Display helpers. Every transcript line is shown behind a gutter with its line number; marker lines (from
// the index) use `▸`, content lines `│`, so text inside an output can never pass for structure.

function gutter(entry: TranscriptEntry, line: number, width: number, mark: string): string {
  return `${mark} ${String(line + 1).padStart(width)}${isMarkerLine(entry, line) ? "▸" : "│"} `;
}

function cutLine(text: string, focus: number, max: number): string {
  if (text.length <= max) return text;
  const start = Math.max(0, Math.min(focus - Math.floor(max / 4), text.length - max));
  const head = start > 0 ? "…" : "";
  const tail = start + max < text.length ? "…" : "";
  return `${head}${text.slice(start, start + max)}${tail} [line of ${text.length} chars cut; context_show_entry shows it whole]`;
}

function describe(entry: TranscriptEntry): string {
  return `${entry.id} · ${entry.role}${entry.name ? ` ${entry.name}` : ""} · ${entry.timestamp}`;
}

const ROLE_ALIASES: Record<string, TranscriptRole> = {
  tool: "toolResult",
  toolresult: "toolResult",
  tool_result: "toolResult",
  bashexecution: "bash",
  custom_message: "custom",
  branch_summary: "branchSummary",
  branchsummary: "branchSummary",
  compactionsummary: "compaction",
};

function normalizeRole(role: unknown): TranscriptRole | undefined {
  if (typeof role !== "string" || role.trim() === "") return undefined;
  const r = role.trim();
  const exact = TRANSCRIPT_ROLES.find((known) => known.toLowerCase() === r.toLowerCase());
  return exact ?? ROLE_ALIASES[r.toLowerCase()];
}

// ---------------------------------------------------------------------------------------------------------
// list_entries

export interface ListDetails {
  entries: { id: string; role: TranscriptRole; timestamp: string }[];
  total: number;
  nextCursor?: string;
}

/** Entry ids, roles, timestamps and previews of the active branch, oldest first, one page at a time. */
export function listEntries(index: TranscriptIndex, params: ListParams, limits: RecallLimits): SearchOutcome<ListDetails> {
  const role = normalizeRole(params.role);
  if (params.role !== undefined && params.role.trim() !== "" && !role) {
    return { ok: false, error: `unknown role ${JSON.stringify(params.role)}; use one of ${TRANSCRIPT_ROLES.join(", ")}` };
  }
  const key = queryKey("list", params);
  let start = 0;
  if (params.cursor) {
    const cursor = resumeAt("list", key, params.cursor, index);
    if (typeof cursor === "string") return { ok: false, error: cursor };
    start = cursor.ordinal;
  }
  const matching = (e: TranscriptEntry) => !role || e.role === role;
  const rows: string[] = [];
  const listed: ListDetails["entries"] = [];
  let chars = 0;
  let next: number | undefined;
  for (let o = start; o < index.entries.length; o++) {
    const e = index.entries[o];
    if (!matching(e)) continue;
    const row = `#${o + 1} ${e.id} ${e.role}${e.name ? `(${e.name})` : ""} ${e.timestamp} — ${e.preview}`;
    if (listed.length >= limits.listPageSize || (listed.length > 0 && chars + row.length + 1 > limits.maxChars - 300)) {
      next = o;
      break;
    }
    rows.push(row);
    listed.push({ id: e.id, role: e.role, timestamp: e.timestamp });
    chars += row.length + 1;
  }
  const total = role ? index.entries.filter(matching).length : index.entries.length;
  const nextCursor = next === undefined ? undefined : encodeCursor({ kind: "list", fingerprint: fnv1a(key), ordinal: next, position: 0, anchor: index.entries[next].id });
  const head = listed.length
    ? `${listed.length} of ${total} ${role ?? "entries"}${role ? " entries" : ""} on the active branch (oldest first)${start ? `, continuing at #${start + 1}` : ""}:`
    : `no ${role ? `${role} ` : ""}entries${start ? " after this point" : " on the active branch"}.`;
  const foot = nextCursor ? `\nMore entries follow: call again with the same role and cursor "${nextCursor}".` : "";
  return { ok: true, text: [head, ...rows].join("\n") + foot, details: { entries: listed, total, ...(nextCursor ? { nextCursor } : {}) }, ...(nextCursor ? { nextCursor } : {}) };
}

// ---------------------------------------------------------------------------------------------------------
// grep

/** One matching line, attributed by the index. Lines are 1-based within the entry (line 1 is its header). */
export interface GrepMatch {
  entryId: string;
  role: TranscriptRole;
  line: number;
  /** Marker line of the section the match starts in. */
  section: string;
}

export interface GrepDetails {
  matches: GrepMatch[];
  nextCursor?: string;
  /** True when the call stopped at its scan or time cap rather than at a result or character bound. */
  scanCapped: boolean;
  scannedChars: number;
}

interface RawMatch {
  ordinal: number;
  line: number;
  endLine: number;
  column: number;
}

function renderGrepPage(index: TranscriptIndex, matches: readonly RawMatch[], context: number, limits: RecallLimits): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < matches.length) {
    const entry = index.entries[matches[i].ordinal];
    const last = lineCount(entry) - 1;
    // Merge matches of one entry whose context windows touch, like grep -C.
    const group: RawMatch[] = [matches[i]];
    let to = Math.min(last, matches[i].endLine + context);
    let j = i + 1;
    while (j < matches.length && matches[j].ordinal === matches[i].ordinal && matches[j].line - context <= to + 1) {
      group.push(matches[j]);
      to = Math.max(to, Math.min(last, matches[j].endLine + context));
      j++;
    }
    const from = Math.max(0, group[0].line - context);
    const width = String(to + 1).length;
    const focus = new Map<number, number>();
    for (const m of group) for (let l = m.line; l <= m.endLine; l++) if (!focus.has(l)) focus.set(l, l === m.line ? m.column : 0);
    out.push(`── entry ${describe(entry)} · in ${sectionAt(entry, group[0].line).label}`);
    for (let l = from; l <= to; l++) {
      const hit = focus.has(l);
      out.push(gutter(entry, l, width, hit ? ">" : " ") + cutLine(lineText(entry, l), focus.get(l) ?? 0, limits.maxLineChars));
    }
    i = j;
  }
  return out;
}

/**
 * Search over the rendered branch. A regex matches within one line (long lines in overlapping windows); exact
 * text (`literal`) matches anywhere in one entry, across lines too. Each matching line is one result, shown with
 * `context` lines either side (clipped to its entry). Pages stop at `maxResults` matches, `maxChars`
 * characters, `maxScanChars` scanned or the engine's time budget, and return a cursor to continue.
 */
export function grepTranscript(
  index: TranscriptIndex,
  params: GrepParams,
  limits: RecallLimits,
  engine: RegexEngine = BACKTRACKING_ENGINE,
): SearchOutcome<GrepDetails> {
  if (typeof params.pattern !== "string" || params.pattern === "") return { ok: false, error: "pattern must be a non-empty string" };
  const context = Math.max(0, Math.min(limits.maxContext, Math.floor(typeof params.context === "number" && Number.isFinite(params.context) ? params.context : 0)));
  const matcher = compileMatcher(params, engine, limits);
  if (typeof matcher === "string") return { ok: false, error: matcher };
  const key = queryKey("grep", params);
  let ordinal = 0;
  let offset = 0;
  if (params.cursor) {
    const cursor = resumeAt("grep", key, params.cursor, index);
    if (typeof cursor === "string") return { ok: false, error: cursor };
    ordinal = cursor.ordinal;
    offset = cursor.position;
  }

  const overBudget = engine.startBudget?.();
  const page: RawMatch[] = [];
  let rendered: string[] = [];
  /** Where the next call resumes: an entry and a character offset in it. */
  let resume: { ordinal: number; offset: number } | undefined;
  let scanned = 0;
  let scanCapped = false;
  const headerRoom = 400;

  /** Add a match to the page, or report that it belongs to the next page. */
  const accept = (match: RawMatch): boolean => {
    if (page.length >= limits.maxResults) return false;
    const candidate = renderGrepPage(index, [...page, match], context, limits);
    const size = candidate.reduce((n, l) => n + l.length + 1, 0);
    if (page.length > 0 && size > limits.maxChars - headerRoom) return false;
    page.push(match);
    rendered = candidate;
    return true;
  };
  const stopAt = (at: { ordinal: number; offset: number }, capped: boolean) => {
    resume = at;
    scanCapped = capped;
  };

  scan: for (; ordinal < index.entries.length; ordinal++, offset = 0) {
    if (scanned >= limits.maxScanChars || (scanned > 0 && overBudget?.())) {
      stopAt({ ordinal, offset }, true);
      break;
    }
    const entry = index.entries[ordinal];
    const text = entry.text;
    if (matcher.kind === "literal") {
      // Exact text: one linear indexOf pass over the entry; a needle may span lines.
      let from = offset;
      scanned += text.length - offset;
      for (;;) {
        const at = text.indexOf(matcher.needle, from);
        if (at < 0) break;
        const line = lineAt(entry, at);
        const match = { ordinal, line, endLine: lineAt(entry, at + matcher.needle.length - 1), column: at - entry.lineStarts[line] };
        if (!accept(match)) {
          stopAt({ ordinal, offset: entry.lineStarts[line] }, false);
          break scan;
        }
        if (line + 1 >= lineCount(entry)) break;
        from = entry.lineStarts[line + 1];
      }
      continue;
    }
    // Regex: line by line, long lines in windows; the time budget is checked every few lines and per window.
    const lines = lineCount(entry);
    let line = lineAt(entry, offset);
    let column = offset - entry.lineStarts[line];
    for (let checked = 0; line < lines; line++, column = 0) {
      const content = lineText(entry, line);
      if (content.length <= REGEX_WINDOW) {
        if ((++checked & 63) === 0 && scanned > 0 && overBudget?.()) {
          stopAt({ ordinal, offset: entry.lineStarts[line] }, true);
          break scan;
        }
        scanned += content.length + 1;
        const m = matcher.re.exec(content);
        if (m && !accept({ ordinal, line, endLine: line, column: m.index })) {
          stopAt({ ordinal, offset: entry.lineStarts[line] }, false);
          break scan;
        }
        continue;
      }
      for (let start = column; start < content.length; start += REGEX_WINDOW - REGEX_OVERLAP) {
        if (scanned > 0 && overBudget?.()) {
          stopAt({ ordinal, offset: entry.lineStarts[line] + start }, true);
          break scan;
        }
        const window = content.slice(start, start + REGEX_WINDOW);
        scanned += window.length;
        const m = matcher.re.exec(window);
        if (m) {
          if (!accept({ ordinal, line, endLine: line, column: start + m.index })) {
            stopAt({ ordinal, offset: entry.lineStarts[line] }, false);
            break scan;
          }
          break;
        }
        if (start + REGEX_WINDOW >= content.length) break;
      }
    }
  }

  const nextCursor = resume
    ? encodeCursor({
        kind: "grep",
        fingerprint: fnv1a(key),
        ordinal: resume.ordinal,
        position: resume.offset,
        anchor: index.entries[resume.ordinal].id,
      })
    : undefined;
  const what = `${params.literal ? "text" : "regex"} ${JSON.stringify(params.pattern)}`;
  const entriesHit = new Set(page.map((m) => m.ordinal)).size;
  const head = page.length
    ? `${page.length} matching line${page.length === 1 ? "" : "s"} in ${entriesHit} entr${entriesHit === 1 ? "y" : "ies"} for ${what}${params.cursor ? " (continued)" : ""}. Lines are numbered within each entry; ▸ marks headers and section markers.`
    : `no${params.cursor ? " further" : ""} matches for ${what} on the active branch${scanCapped ? " in this scan window" : ""}.`;
  let body = rendered.join("\n");
  // A single oversized result still has to fit the page.
  if (body.length > limits.maxChars - headerRoom) body = `${body.slice(0, limits.maxChars - headerRoom)}… [result cut at the page limit]`;
  const foot = nextCursor
    ? scanCapped
      ? `\nScan limit (size or time) reached before the end of the branch: call again with the same arguments and cursor "${nextCursor}" to continue.`
      : `\nMore matches may follow: call again with the same arguments and cursor "${nextCursor}".`
    : "";
  const matches: GrepMatch[] = page.map((m) => {
    const entry = index.entries[m.ordinal];
    return { entryId: entry.id, role: entry.role, line: m.line + 1, section: sectionAt(entry, m.line).label };
  });
  return {
    ok: true,
    text: `${head}${body ? `\n${body}` : ""}${foot}`,
    details: { matches, scanCapped, scannedChars: scanned, ...(nextCursor ? { nextCursor } : {}) },
    ...(nextCursor ? { nextCursor } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// show_entry

export interface ShowDetails {
  entryId: string;
  role: TranscriptRole;
  /** 1-based first and last line shown. */
  fromLine: number;
  toLine: number;
  totalLines: number;
  nextCursor?: string;
}

/** Resolve an id or a unique prefix (4+ characters) to a rendered entry, or explain why not. */
export function resolveEntryId(index: TranscriptIndex, id: string): TranscriptEntry | string {
  const wanted = id.trim();
  if (!wanted) return "id must be a non-empty entry id";
  const ordinal = index.ordinalById.get(wanted);
  if (ordinal !== undefined) return index.entries[ordinal];
  if (index.pathPos.has(wanted)) return `entry ${wanted} is on the branch but holds no conversation (model or settings change, label, custom state)`;
  if (wanted.length >= 4) {
    const candidates = index.entries.filter((e) => e.id.startsWith(wanted));
    if (candidates.length === 1) return candidates[0];
    if (candidates.length > 1) return `id prefix ${wanted} is ambiguous: ${candidates.slice(0, 5).map((e) => e.id).join(", ")}`;
  }
  return `no entry ${JSON.stringify(wanted)} on the active branch (abandoned branches and other sessions are not searchable); context_list_entries lists ids`;
}

/** One entry, whole, in pages of at most `maxChars` characters; a very long line is split across pages. */
export function showEntry(index: TranscriptIndex, params: ShowParams, limits: RecallLimits): SearchOutcome<ShowDetails> {
  if (typeof params.id !== "string") return { ok: false, error: "id must be a string" };
  const entry = resolveEntryId(index, params.id);
  if (typeof entry === "string") return { ok: false, error: entry };
  const key = queryKey("show", params);
  let offset = 0;
  if (params.cursor) {
    const cursor = decodeCursor("show", key, params.cursor);
    if (typeof cursor === "string") return { ok: false, error: cursor };
    if (cursor.anchor !== entry.id || cursor.position > entry.text.length) return { ok: false, error: STALE };
    offset = cursor.position;
  }
  const total = lineCount(entry);
  const width = String(total).length;
  const budget = limits.maxChars - 400;
  const out: string[] = [];
  let used = 0;
  const firstLine = lineAt(entry, offset);
  let line = firstLine;
  let next: number | undefined;
  while (line < total) {
    const start = Math.max(offset, entry.lineStarts[line]);
    const end = line + 1 < total ? entry.lineStarts[line + 1] - 1 : entry.text.length;
    const continued = start > entry.lineStarts[line];
    const prefix = gutter(entry, line, width, " ") + (continued ? "…" : "");
    const room = budget - used - prefix.length - 1;
    if (end - start <= room) {
      out.push(prefix + entry.text.slice(start, end));
      used += prefix.length + end - start + 1;
      line++;
      continue;
    }
    if (out.length > 0 && room < 200) {
      next = start;
      break;
    }
    // Split a line too long for the rest of this page; the next page resumes mid-line.
    const take = Math.max(room, 200);
    out.push(`${prefix}${entry.text.slice(start, start + take)}…`);
    next = start + take;
    break;
  }
  const lastLine = next === undefined ? total - 1 : lineAt(entry, Math.max(next - 1, 0));
  const nextCursor = next === undefined ? undefined : encodeCursor({ kind: "show", fingerprint: fnv1a(key), ordinal: 0, position: next, anchor: entry.id });
  const head = `entry ${describe(entry)} · ${total} lines, ${entry.text.length} characters${offset ? ` · continued from line ${firstLine + 1}` : ""}. ▸ marks the header and section markers.`;
  const foot = nextCursor ? `\nThis entry continues: call again with id "${entry.id}" and cursor "${nextCursor}".` : "";
  return {
    ok: true,
    text: [head, ...out].join("\n") + foot,
    details: { entryId: entry.id, role: entry.role, fromLine: firstLine + 1, toLine: lastLine + 1, totalLines: total, ...(nextCursor ? { nextCursor } : {}) },
    ...(nextCursor ? { nextCursor } : {}),
  };
}
