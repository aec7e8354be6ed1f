// Paginated list / grep / show over the transcript index, bounded by result count, characters and scan work.
// Regular expressions run on a linear-time engine (see regex.ts). Pure: no I/O; attribution always comes from
// the index.
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { MAX_ID_LENGTH, quoted } from "./input.ts";
import {
  compileRegex,
  foldCase,
  MAX_LITERAL_LENGTH,
  meetsRequirement,
  WINDOW_OVERLAP,
  type CompiledRegex,
} from "./regex.ts";
import type { RecallLimits } from "./settings.ts";
import {
  isMarkerLine,
  isRecallTraffic,
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
export type SearchOutcome<D> =
  | { ok: true; text: string; details: D; nextCursor?: string }
  | { ok: false; error: string };

export interface ListParams {
  role?: string;
  cursor?: string;
  /** Another session of the project, by id or file name (see project.ts); part of the cursor's key. */
  session?: string;
}
export interface GrepParams {
  pattern: string;
  literal?: boolean;
  context?: number;
  cursor?: string;
  /** Match case exactly (default: case is ignored). */
  caseSensitive?: boolean;
  /** Also search the recall tools' own calls and results (default: skipped). */
  includeRecall?: boolean;
  /** `project` also searches the project's earlier sessions (see project.ts); default this session only. */
  scope?: "session" | "project";
}
export interface ShowParams {
  id: string;
  cursor?: string;
  /** Another session of the project, by id or file name (see project.ts); part of the cursor's key. */
  session?: string;
}

/**
 * The wall-clock side of a grep's bounds, injected by the host, which owns the clock. `startBudget` starts the
 * time budget of one call and returns its check, asked between engine calls: true stops the scan with a
 * continuation cursor. Without it only the deterministic work cap applies.
 */
export interface ScanBudget {
  startBudget?: () => () => boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Cursors

export type SearchKind = "list" | "grep" | "show";
const KIND_CODE: Record<SearchKind, string> = { list: "l", grep: "g", show: "s" };
const KIND_TOOL: Record<SearchKind, string> = { list: "list_entries", grep: "grep", show: "show_entry" };

/**
 * Canonical form of a call's parameters without its cursor. Two calls with the same key ask the same
 * question; the lookup budget uses it to tell a page follow from a new query.
 */
export function queryKey(kind: SearchKind, params: object): string {
  const p = params as Record<string, unknown>;
  // Where the call looks: another session by name, or the project scope. Absent for this session, so the keys
  // (and cursors) of single-session calls read as they always did.
  const where = [
    ...(p.scope === "project" ? ["project"] : []),
    ...(typeof p.session === "string" && p.session !== "" ? [`session:${p.session}`] : []),
  ];
  switch (kind) {
    case "list":
      return JSON.stringify(["list", normalizeRole(p.role) ?? null, ...where]);
    case "grep":
      return JSON.stringify([
        "grep",
        String(p.pattern ?? ""),
        p.literal === true,
        typeof p.context === "number" ? Math.floor(p.context) : 0,
        p.caseSensitive === true,
        p.includeRecall === true,
        ...where,
      ]);
    case "show":
      return JSON.stringify(["show", String(p.id ?? ""), ...where]);
  }
}

const STALE = "the branch changed since this cursor was issued (e.g. /tree); run the query again without a cursor";

/** Decode a list/grep cursor and check that the entry it points at is still where it was on the branch. */
function resumeAt(
  kind: "list" | "grep",
  key: string,
  raw: string,
  index: TranscriptIndex,
): { ordinal: number; position: number } | string {
  const cursor = decodeCursor(KIND_CODE[kind], key, raw, KIND_TOOL[kind]);
  if (typeof cursor === "string") return cursor;
  const entry = index.entries[cursor.ordinal];
  if (entry?.id !== cursor.anchor) return STALE;
  if (cursor.position > entry.text.length)
    return `invalid cursor: its position is past the end of entry ${entry.id}. Pass a cursor exactly as returned, or omit it`;
  return cursor;
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
  // Own keys only: "constructor" or "__proto__" is no role.
  return exact ?? (Object.hasOwn(ROLE_ALIASES, r.toLowerCase()) ? ROLE_ALIASES[r.toLowerCase()] : undefined);
}

// ---------------------------------------------------------------------------------------------------------
// list_entries

export interface ListDetails {
  entries: { id: string; role: TranscriptRole; timestamp: string }[];
  total: number;
  nextCursor?: string;
}

/** Entry ids, roles, timestamps and previews of the active branch, oldest first, one page at a time. */
export function listEntries(
  index: TranscriptIndex,
  params: ListParams,
  limits: RecallLimits,
): SearchOutcome<ListDetails> {
  const role = normalizeRole(params.role);
  if (params.role !== undefined && params.role.trim() !== "" && !role) {
    return { ok: false, error: `unknown role ${quoted(params.role)}; use one of ${TRANSCRIPT_ROLES.join(", ")}` };
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
  const nextCursor =
    next === undefined
      ? undefined
      : encodeCursor(KIND_CODE.list, key, { ordinal: next, position: 0, anchor: index.entries[next].id });
  const head = listed.length
    ? `${listed.length} of ${total} ${role ?? "entries"}${role ? " entries" : ""} on the active branch (oldest first)${start ? `, continuing at #${start + 1}` : ""}:`
    : `no ${role ? `${role} ` : ""}entries${start ? " after this point" : " on the active branch"}.`;
  const foot = nextCursor ? `\nMore entries follow: call again with the same role and cursor "${nextCursor}".` : "";
  return {
    ok: true,
    text: [head, ...rows].join("\n") + foot,
    details: { entries: listed, total, ...(nextCursor ? { nextCursor } : {}) },
    ...(nextCursor ? { nextCursor } : {}),
  };
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
  /** True when the call stopped at its work or time cap rather than at a result or character bound. */
  scanCapped: boolean;
  /** Characters examined (a character tested twice counts twice). */
  scannedChars: number;
  /** Work units spent: characters times {@link GrepDetails.workPerChar} for engine steps, one per character otherwise. */
  work: number;
  /** What one character costs in an engine step: the regex program size, or 1 for exact text. */
  workPerChar: number;
}

/** A match inside one index: entry ordinal, 0-based first and last line, and the column where it starts. */
export interface RawMatch {
  ordinal: number;
  line: number;
  endLine: number;
  column: number;
}

function renderGrepPage(
  index: TranscriptIndex,
  matches: readonly RawMatch[],
  context: number,
  limits: RecallLimits,
  entrySuffix = "",
): string[] {
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
    for (const m of group)
      for (let l = m.line; l <= m.endLine; l++) if (!focus.has(l)) focus.set(l, l === m.line ? m.column : 0);
    out.push(`── entry ${describe(entry)} · in ${sectionAt(entry, group[0].line).label}${entrySuffix}`);
    for (let l = from; l <= to; l++) {
      const hit = focus.has(l);
      out.push(
        gutter(entry, l, width, hit ? ">" : " ") + cutLine(lineText(entry, l), focus.get(l) ?? 0, limits.maxLineChars),
      );
    }
    i = j;
  }
  return out;
}

/**
 * Each rendered entry's case-folded text, made on its first case-insensitive search and kept as long as the
 * entry lives. Entries never change once rendered; without it, every search (and every match within a search)
 * folded the text again, which made a page of many matches in one long entry quadratic, and the lab's hundreds
 * of probe searches over one index fold the whole session each time.
 */
const foldedTexts = new WeakMap<TranscriptEntry, string>();

/** Entries whose owner keeps their text out of memory (see {@link foldAtEachRead}). */
const foldedAtEachRead = new WeakSet<TranscriptEntry>();

/**
 * Keep no folded copy of `entry`'s text: its owner reads the text from elsewhere on purpose (the lab moves long texts
 * to a file), and a memo would bring the whole index back into memory, copy by copy. Its folded text is made at each read.
 */
export function foldAtEachRead(entry: TranscriptEntry): void {
  foldedAtEachRead.add(entry);
  foldedTexts.delete(entry);
}

/** `entry.text` folded by {@link foldCase}: same length, so its offsets are the entry's. */
export function foldedText(entry: TranscriptEntry): string {
  let folded = foldedTexts.get(entry);
  if (folded === undefined) {
    folded = foldCase(entry.text);
    if (!foldedAtEachRead.has(entry)) foldedTexts.set(entry, folded);
  }
  return folded;
}

/** The text a matcher searches in: the entry's own, or its folded copy when case is ignored. */
function searchedText(entry: TranscriptEntry, fold: boolean): string {
  return fold ? foldedText(entry) : entry.text;
}

/** How a grep finds text: exact text (optionally case-folded) or a compiled regular expression. */
export type Matcher =
  | { kind: "literal"; needle: string; fold: boolean }
  | { kind: "regex"; re: CompiledRegex; fold: boolean };

function compileMatcher(params: GrepParams): Matcher | string {
  const fold = params.caseSensitive !== true;
  if (params.literal === true) {
    if (params.pattern.length > MAX_LITERAL_LENGTH)
      return `the text is ${params.pattern.length} characters; the limit is ${MAX_LITERAL_LENGTH} for literal: true. Search for a distinctive part of it`;
    return { kind: "literal", needle: fold ? foldCase(params.pattern) : params.pattern, fold };
  }
  const re = compileRegex(params.pattern, !fold);
  return typeof re === "string" ? `pattern refused: ${re}` : { kind: "regex", re, fold };
}

/**
 * State shared by every index one grep call scans: the compiled matcher, the page built so far and the budgets
 * spent so far. The project scope scans several sessions' indexes with one run, so the page and the bounds are
 * per call, not per index.
 */
export interface GrepRun {
  readonly matcher: Matcher;
  readonly context: number;
  readonly includeRecall: boolean;
  readonly limits: RecallLimits;
  /** Characters of page text reserved for the caller's head and foot lines. */
  readonly headerRoom: number;
  /** Work at which the scan stops; at most `limits.maxScanWork`, lower when the caller scans in slices. */
  workLimit: number;
  /** The time budget's check, if any (true: stop). */
  readonly overBudget?: () => boolean;
  /** Matching lines on the page, over every index scanned so far. */
  results: number;
  /** Characters of page text rendered by earlier indexes. */
  pageChars: number;
  scanned: number;
  work: number;
}

/** Start a grep run: validate and compile the pattern. */
export function startGrepRun(
  params: GrepParams,
  limits: RecallLimits,
  budget: ScanBudget = {},
  headerRoom = 400,
): GrepRun | string {
  if (typeof params.pattern !== "string" || params.pattern === "") return "pattern must be a non-empty string";
  const context = Math.max(
    0,
    Math.min(
      limits.maxContext,
      Math.floor(typeof params.context === "number" && Number.isFinite(params.context) ? params.context : 0),
    ),
  );
  const matcher = compileMatcher(params);
  if (typeof matcher === "string") return matcher;
  return {
    matcher,
    context,
    includeRecall: params.includeRecall === true,
    limits,
    headerRoom,
    workLimit: limits.maxScanWork,
    overBudget: budget.startBudget?.(),
    results: 0,
    pageChars: 0,
    scanned: 0,
    work: 0,
  };
}

/** What one index contributed to a run's page. */
export interface IndexScan {
  /** The index's matches on the page, in order. */
  matches: RawMatch[];
  /** Rendered lines of those matches (empty when none). */
  lines: string[];
  /** Where a next call resumes in this index; absent when the index was scanned to its end. */
  resume?: { ordinal: number; offset: number };
  /** True when the scan stopped at the work limit or the time budget, not at a page bound. */
  capped: boolean;
}

/** Work units one character costs with this run's matcher. */
export function runCost(run: GrepRun): number {
  return run.matcher.kind === "regex" ? run.matcher.re.programSize : 1;
}

/**
 * Scan one index from `start` with a run's matcher, adding matches to the run's page until a page bound, the
 * work limit or the time budget stops it. `entrySuffix` is appended to each entry line of the page (the project
 * scope names the session there).
 */
export function scanIndex(
  index: TranscriptIndex,
  run: GrepRun,
  start: { ordinal: number; offset: number },
  entrySuffix = "",
): IndexScan {
  const { matcher, context, limits, includeRecall } = run;
  const page: RawMatch[] = [];
  let rendered: string[] = [];
  let resume: { ordinal: number; offset: number } | undefined;
  let scanCapped = false;
  // Steps taken so far. The budgets may stop a scan only after one, so every call makes progress.
  let steps = 0;
  const cost = runCost(run);
  const spent = () => steps > 0 && (run.work >= run.workLimit || run.overBudget?.() === true);

  /** Add a match to the page, or report that it belongs to the next page. */
  const accept = (match: RawMatch): boolean => {
    if (run.results + page.length >= limits.maxResults) return false;
    const candidate = renderGrepPage(index, [...page, match], context, limits, entrySuffix);
    const size = candidate.reduce((n, l) => n + l.length + 1, 0);
    if (run.results + page.length > 0 && run.pageChars + size > limits.maxChars - run.headerRoom) return false;
    page.push(match);
    rendered = candidate;
    return true;
  };
  const stopAt = (at: { ordinal: number; offset: number }, capped: boolean) => {
    resume = at;
    scanCapped = capped;
  };
  /** Feed `text` to the engine as one step. */
  const engineTest = (re: CompiledRegex, text: string): boolean => {
    steps++;
    run.scanned += text.length;
    run.work += text.length * cost;
    return re.test(text);
  };
  /** Column of the match in a line the engine said matches; only needed when the display cuts the line. */
  const column = (re: CompiledRegex, text: string): number => {
    if (text.length <= limits.maxLineChars) return 0;
    run.work += text.length * cost;
    return Math.max(0, re.locate(text));
  };

  let ordinal = start.ordinal;
  let offset = start.offset;
  scan: for (; ordinal < index.entries.length; ordinal++, offset = 0) {
    if (spent()) {
      stopAt({ ordinal, offset }, true);
      break;
    }
    const entry = index.entries[ordinal];
    const lines = lineCount(entry);
    const hidden = (line: number) => !includeRecall && isRecallTraffic(entry, line);
    // A recall tool's result is traffic from its header on: nothing to scan.
    if (hidden(0) && entry.recallTraffic?.some(([from, to]) => from === 0 && to >= lines)) continue;
    const text = entry.text;

    if (matcher.kind === "literal") {
      // Exact text: one linear indexOf pass over the entry; a needle may span lines.
      steps++;
      run.scanned += text.length - offset;
      run.work += text.length - offset;
      const searched = searchedText(entry, matcher.fold);
      let from = offset;
      for (;;) {
        const at = searched.indexOf(matcher.needle, from);
        if (at < 0) break;
        const line = lineAt(entry, at);
        if (!hidden(line)) {
          const match = {
            ordinal,
            line,
            endLine: lineAt(entry, at + matcher.needle.length - 1),
            column: at - entry.lineStarts[line],
          };
          if (!accept(match)) {
            stopAt({ ordinal, offset: entry.lineStarts[line] }, false);
            break scan;
          }
        }
        if (line + 1 >= lines) break;
        from = entry.lineStarts[line + 1];
      }
      continue;
    }

    const re = matcher.re;
    // Text every match needs: one indexOf pass rules out most entries without running the engine.
    if (re.requirement) {
      const searched = searchedText(entry, matcher.fold);
      const rest = offset > 0 ? searched.slice(offset) : searched;
      run.scanned += rest.length;
      run.work += rest.length;
      if (!meetsRequirement(re.requirement, rest)) {
        steps++;
        continue;
      }
    }
    const step = re.stepChars;
    let line = lineAt(entry, offset);
    let col = offset - entry.lineStarts[line];
    while (line < lines) {
      if (hidden(line)) {
        line++;
        col = 0;
        continue;
      }
      const content = lineText(entry, line);
      if (col > 0 || content.length > step) {
        // A line too long for one step: overlapping windows, first match only (one result per line).
        for (let start = col; ; start += step - WINDOW_OVERLAP) {
          if (spent()) {
            stopAt({ ordinal, offset: entry.lineStarts[line] + start }, true);
            break scan;
          }
          const window = content.slice(start, start + step);
          if (engineTest(re, window)) {
            if (!accept({ ordinal, line, endLine: line, column: start + column(re, window) })) {
              stopAt({ ordinal, offset: entry.lineStarts[line] }, false);
              break scan;
            }
            break;
          }
          if (start + step >= content.length) break;
        }
        line++;
        col = 0;
        continue;
      }
      // Short lines go to the engine together, up to one step; only a group that matches is tested line by
      // line. A pattern that could match a group but no line of it (\A, \z, (?-m)) is tested line by line.
      let end = line + 1;
      let size = content.length;
      while (re.joinable && end < lines && !hidden(end)) {
        const next = entry.lineStarts[end + 1] ?? text.length + 1;
        const length = next - 1 - entry.lineStarts[end];
        if (size + 1 + length > step) break;
        size += 1 + length;
        end++;
      }
      if (spent()) {
        stopAt({ ordinal, offset: entry.lineStarts[line] }, true);
        break scan;
      }
      const group = text.slice(entry.lineStarts[line], entry.lineStarts[line] + size);
      if (engineTest(re, group)) {
        for (let l = line; l < end; l++) {
          const one = end - line === 1 ? group : lineText(entry, l);
          if (end - line > 1) {
            // Not before the first line: a call that stopped there would resume where it started.
            if (l > line && spent()) {
              stopAt({ ordinal, offset: entry.lineStarts[l] }, true);
              break scan;
            }
            if (!engineTest(re, one)) continue;
          }
          if (!accept({ ordinal, line: l, endLine: l, column: column(re, one) })) {
            stopAt({ ordinal, offset: entry.lineStarts[l] }, false);
            break scan;
          }
        }
      }
      line = end;
      col = 0;
    }
  }
  run.results += page.length;
  run.pageChars += rendered.reduce((n, l) => n + l.length + 1, 0);
  return { matches: page, lines: rendered, ...(resume ? { resume } : {}), capped: scanCapped };
}

/** How a grep's query is described in its result's first line. */
export function describeQuery(params: GrepParams, run: GrepRun): string {
  const how = [
    run.matcher.fold ? "ignoring case" : "case-sensitive",
    ...(run.includeRecall ? ["recall traffic included"] : []),
  ].join(", ");
  return `${params.literal ? "text" : "regex"} ${quoted(params.pattern, 120)} (${how})`;
}

/** A match as the tool's details report it. */
export function reportMatch(index: TranscriptIndex, m: RawMatch): GrepMatch {
  const entry = index.entries[m.ordinal];
  return { entryId: entry.id, role: entry.role, line: m.line + 1, section: sectionAt(entry, m.line).label };
}

/**
 * Search over the rendered branch. A regex matches within one line, ^ and $ at its ends; exact text
 * (`literal`) matches anywhere in one entry, across lines too. Case is ignored unless `caseSensitive`, and the
 * recall tools' own calls and results are skipped unless `includeRecall`. Each matching line is one result,
 * shown with `context` lines either side (clipped to its entry). Pages stop at `maxResults` matches,
 * `maxChars` characters, `maxScanWork` units of work, or the injected time budget, and return a cursor.
 *
 * Work is counted as characters times the engine's program size (one per character for exact text), since
 * that bounds what a linear-time engine does. Lines are fed to the engine in steps of at most about
 * `STEP_WORK` units, grouped when short, and a line too long for one step is searched in overlapping windows;
 * the budgets are checked between steps.
 */
export function grepTranscript(
  index: TranscriptIndex,
  params: GrepParams,
  limits: RecallLimits,
  budget: ScanBudget = {},
): SearchOutcome<GrepDetails> {
  const key = queryKey("grep", params);
  let ordinal = 0;
  let offset = 0;
  const run = startGrepRun(params, limits, budget);
  if (typeof run === "string") return { ok: false, error: run };
  if (params.cursor) {
    const cursor = resumeAt("grep", key, params.cursor, index);
    if (typeof cursor === "string") return { ok: false, error: cursor };
    ordinal = cursor.ordinal;
    offset = cursor.position;
  }
  const { matches: page, lines: rendered, resume, capped: scanCapped } = scanIndex(index, run, { ordinal, offset });

  const nextCursor = resume
    ? encodeCursor(KIND_CODE.grep, key, {
        ordinal: resume.ordinal,
        position: resume.offset,
        anchor: index.entries[resume.ordinal].id,
      })
    : undefined;
  const what = describeQuery(params, run);
  const includeRecall = run.includeRecall;
  const entriesHit = new Set(page.map((m) => m.ordinal)).size;
  const skipped = includeRecall
    ? ""
    : " The recall tools' own calls and results are not searched; includeRecall: true adds them.";
  const head = page.length
    ? `${page.length} matching line${page.length === 1 ? "" : "s"} in ${entriesHit} entr${entriesHit === 1 ? "y" : "ies"} for ${what}${params.cursor ? " (continued)" : ""}. Lines are numbered within each entry; ▸ marks headers and section markers.`
    : `no${params.cursor ? " further" : ""} matches for ${what} on the active branch${scanCapped ? " in this scan window" : ""}.${skipped}`;
  let body = rendered.join("\n");
  // A single oversized result still has to fit the page.
  if (body.length > limits.maxChars - run.headerRoom)
    body = `${body.slice(0, limits.maxChars - run.headerRoom)}… [result cut at the page limit]`;
  const foot = nextCursor
    ? scanCapped
      ? `\nScan limit (work or time) reached before the end of the branch: call again with the same arguments and cursor "${nextCursor}" to continue.`
      : `\nMore matches may follow: call again with the same arguments and cursor "${nextCursor}".`
    : "";
  const matches: GrepMatch[] = page.map((m) => reportMatch(index, m));
  return {
    ok: true,
    text: `${head}${body ? `\n${body}` : ""}${foot}`,
    details: {
      matches,
      scanCapped,
      scannedChars: run.scanned,
      work: run.work,
      workPerChar: runCost(run),
      ...(nextCursor ? { nextCursor } : {}),
    },
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
  if (wanted.length > MAX_ID_LENGTH)
    return `the id is ${wanted.length} characters; entry ids are at most ${MAX_ID_LENGTH}. context_list_entries lists them`;
  const ordinal = index.ordinalById.get(wanted);
  if (ordinal !== undefined) return index.entries[ordinal];
  if (index.pathPos.has(wanted))
    return `entry ${wanted} is on the branch but holds no conversation (model or settings change, label, custom state)`;
  if (wanted.length >= 4) {
    const candidates = index.entries.filter((e) => e.id.startsWith(wanted));
    if (candidates.length === 1) return candidates[0];
    if (candidates.length > 1)
      return `id prefix ${quoted(wanted)} is ambiguous: ${candidates
        .slice(0, 5)
        .map((e) => e.id)
        .join(", ")}`;
  }
  return `no entry ${quoted(wanted)} on the active branch (abandoned branches and other sessions are not searchable); context_list_entries lists ids`;
}

/** One entry, whole, in pages of at most `maxChars` characters; a very long line is split across pages. */
export function showEntry(
  index: TranscriptIndex,
  params: ShowParams,
  limits: RecallLimits,
): SearchOutcome<ShowDetails> {
  if (typeof params.id !== "string") return { ok: false, error: "id must be a string" };
  const entry = resolveEntryId(index, params.id);
  if (typeof entry === "string") return { ok: false, error: entry };
  const key = queryKey("show", params);
  let offset = 0;
  if (params.cursor) {
    const cursor = decodeCursor(KIND_CODE.show, key, params.cursor, KIND_TOOL.show);
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
  const nextCursor =
    next === undefined
      ? undefined
      : encodeCursor(KIND_CODE.show, key, { ordinal: 0, position: next, anchor: entry.id });
  const head = `entry ${describe(entry)} · ${total} lines, ${entry.text.length} characters${offset ? ` · continued from line ${firstLine + 1}` : ""}. ▸ marks the header and section markers.`;
  const foot = nextCursor ? `\nThis entry continues: call again with id "${entry.id}" and cursor "${nextCursor}".` : "";
  return {
    ok: true,
    text: [head, ...out].join("\n") + foot,
    details: {
      entryId: entry.id,
      role: entry.role,
      fromLine: firstLine + 1,
      toLine: lastLine + 1,
      totalLines: total,
      ...(nextCursor ? { nextCursor } : {}),
    },
    ...(nextCursor ? { nextCursor } : {}),
  };
}
