// Recall across the project's sessions: this session plus the earlier sessions of the same cwd, searched newest
// first under per-call bounds, with cursors that name the session they stop in. Pure: every file read, stat and
// pause comes in through the injected source; nothing here touches the disk or a clock.
import type { SessionEntry } from "../log/entries.ts";
import { decodeCursor, encodeCursor } from "./cursor.ts";
import { quoted } from "./input.ts";
import {
  describeQuery,
  queryKey,
  reportMatch,
  runCost,
  scanIndex,
  startGrepRun,
  type GrepMatch,
  type GrepParams,
  type ListParams,
  type RawMatch,
  type ScanBudget,
  type SearchOutcome,
} from "./search.ts";
import type { RecallLimits } from "./settings.ts";
import type { TranscriptIndex } from "./transcript.ts";

/** An earlier session of the project, as the directory listing found it. `file` is a name, never a path. */
export interface ProjectSession {
  /** File name inside the session directory. */
  file: string;
  /** Session id from the file's header. */
  id: string;
  /** Start time from the file's header (ISO text as written). */
  started: string;
  /** File size in bytes: what opening it reads when its index is not cached. */
  size: number;
}

/** The current session, searched through its live index. */
export interface CurrentSession {
  id: string;
  started: string;
  index: TranscriptIndex;
}

/** Files of the session directory that were not searched, by reason. */
export interface SkippedFiles {
  /** Unreadable, not JSONL, no valid session header, too large, or a link or special file. */
  damaged: number;
  /** Valid sessions of another working directory: never read past their header. */
  otherProject: number;
}

/**
 * What a project-scope call searches, supplied by the host: the current session, the earlier sessions of the same
 * cwd newest first, and how to open one. `open` reads a file asynchronously (or returns its cached index) and
 * resolves to the index or to why the file was skipped; `pause` yields to the event loop.
 */
export interface ProjectSource {
  current: CurrentSession;
  earlier: readonly ProjectSession[];
  skipped: SkippedFiles;
  isCached(session: ProjectSession): boolean;
  open(session: ProjectSession): Promise<TranscriptIndex | string>;
  pause(): Promise<void>;
}

/** Per-call bounds of the project scope, on top of the single-session ones (results, characters, work, time). */
export interface ProjectBounds {
  /** Earlier sessions one call opens (cached or not). */
  sessionsPerCall: number;
  /** Bytes one call may read from files whose index is not cached (the first file is always read). */
  readBytesPerCall: number;
  /** Work units scanned between two pauses, so a long scan never holds the event loop. */
  sliceWork: number;
}

export const DEFAULT_PROJECT_BOUNDS: ProjectBounds = {
  sessionsPerCall: 25,
  readBytesPerCall: 256 * 1024 * 1024,
  sliceWork: 8_000_000,
};

/** Longest `session` argument accepted. */
export const MAX_SESSION_NAME_LENGTH = 256;

/** Session ids this scope accepts from a header: Pi's UUIDs and `--session-id` values, never a path. */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/** The message a disabled project scope answers with. */
export const CROSS_SESSION_OFF =
  "the project scope is switched off (contextLedger.recall.crossSession: false in the global settings, or PI_CONTEXT_LEDGER_RECALL_CROSS_SESSION=0); only this session can be searched. Omit scope and session to search it.";

// ---------------------------------------------------------------------------------------------------------
// Session files

/** What a session file's first line must say for the file to be a session of some project. */
export interface SessionHeaderInfo {
  id: string;
  started: string;
  cwd: string;
}

/** Parse a session file's first line, or say why the file is not a session. */
export function parseSessionHeader(line: string): SessionHeaderInfo | string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return "first line is not JSON";
  }
  if (!value || typeof value !== "object" || Array.isArray(value)) return "first line is not a session header";
  const h = value as Record<string, unknown>;
  if (h.type !== "session") return "first line is not a session header";
  if (typeof h.id !== "string" || !SESSION_ID.test(h.id)) return "session id missing or not a plain id";
  if (typeof h.cwd !== "string" || h.cwd === "") return "session header has no cwd";
  if (typeof h.timestamp !== "string" || h.timestamp.length > 64) return "session header has no timestamp";
  return { id: h.id, started: h.timestamp, cwd: h.cwd };
}

/** Earlier sessions newest first: by start time as written (ISO text sorts by time), then by file name. */
export function orderSessions(sessions: readonly ProjectSession[]): ProjectSession[] {
  return [...sessions].sort((a, b) =>
    a.started === b.started ? (a.file < b.file ? 1 : a.file > b.file ? -1 : 0) : a.started < b.started ? 1 : -1,
  );
}

/**
 * The branch a stored session resumes on: from its last entry back to the root through parent links. A missing
 * parent or a cycle ends the walk, as a damaged file must not hang or crash the search.
 */
export function branchOf(entries: readonly SessionEntry[]): SessionEntry[] {
  const byId = new Map<string, SessionEntry>();
  for (const entry of entries) if (typeof entry?.id === "string") byId.set(entry.id, entry);
  const path: SessionEntry[] = [];
  const seen = new Set<string>();
  let entry: SessionEntry | undefined = [...entries].reverse().find((e) => typeof e?.id === "string");
  while (entry && !seen.has(entry.id)) {
    seen.add(entry.id);
    path.push(entry);
    const parent: unknown = entry.parentId;
    entry = typeof parent === "string" ? byId.get(parent) : undefined;
  }
  return path.reverse();
}

/**
 * Check a `session` argument: a session id or a file name from the project listing, never a path. Returns the
 * trimmed name or the refusal.
 */
export function checkSessionName(raw: unknown): string | { error: string } {
  if (typeof raw !== "string" || raw.trim() === "")
    return { error: 'session must be a session id or file name from context_list_entries { scope: "project" }' };
  const name = raw.trim();
  if (name.length > MAX_SESSION_NAME_LENGTH)
    return { error: `the session name is ${name.length} characters; names are at most ${MAX_SESSION_NAME_LENGTH}` };
  // A path would let a tool argument choose what is read; only names from the listing are looked up.
  if (/[/\\]/.test(name) || name.includes("..") || /[\u0000-\u001f]/.test(name)) {
    return {
      error: `session ${quoted(name)} is refused: pass a session id or file name as context_list_entries { scope: "project" } lists them, not a path`,
    };
  }
  return name;
}

/** Find a session by id, file name (with or without `.jsonl`) or a unique id prefix of 8+ characters. */
export function resolveSession(sessions: readonly ProjectSession[], name: string): ProjectSession | string {
  const exact = sessions.find((s) => s.id === name || s.file === name || s.file === `${name}.jsonl`);
  if (exact) return exact;
  if (name.length >= 8) {
    const candidates = sessions.filter((s) => s.id.startsWith(name));
    if (candidates.length === 1) return candidates[0];
    if (candidates.length > 1)
      return `session prefix ${quoted(name)} is ambiguous: ${candidates
        .slice(0, 5)
        .map((s) => s.id)
        .join(", ")}`;
  }
  return `no earlier session ${quoted(name)} of this project; context_list_entries { scope: "project" } lists them`;
}

// ---------------------------------------------------------------------------------------------------------
// Cursors: `<code>:<fingerprint>:<session ordinal>:<offset>:<session id>~<entry ordinal>~<entry id>`. The session
// is found again by id, so a session that appeared meanwhile does not shift the position.

interface ProjectCursor {
  session: number;
  entry: number;
  offset: number;
  /** Entry id at `entry`, or "" for the start of the session. */
  entryId: string;
}

function encodeProject(code: string, key: string, sessionId: string, at: ProjectCursor): string {
  return encodeCursor(code, key, {
    ordinal: at.session,
    position: at.offset,
    anchor: `${sessionId}~${at.entry}~${at.entryId}`,
  });
}

function decodeProject(
  code: string,
  key: string,
  raw: string,
  sessionIds: readonly string[],
  what: string,
): ProjectCursor | string {
  const cursor = decodeCursor(code, key, raw, what);
  if (typeof cursor === "string") return cursor;
  const m = /^([A-Za-z0-9._-]+)~(\d+)~(.*)$/s.exec(cursor.anchor);
  if (!m || !Number.isSafeInteger(Number(m[2])))
    return `invalid cursor ${quoted(raw)}: pass a cursor exactly as an earlier ${what} page returned it, or omit it`;
  const session = sessionIds.indexOf(m[1]);
  if (session < 0)
    return "the session this cursor stopped in is no longer in the project's list; run the query again without a cursor";
  return { session, entry: Number(m[2]), offset: cursor.position, entryId: m[3] };
}

const STALE = "the session changed since this cursor was issued; run the query again without a cursor";

// ---------------------------------------------------------------------------------------------------------
// grep

/** A match of the project scope: which session it is in, besides where in the entry. */
export interface ProjectGrepMatch extends GrepMatch {
  session: string;
  /** File name of an earlier session; absent for this session. */
  sessionFile?: string;
  sessionStarted: string;
  current: boolean;
}

export interface ProjectGrepDetails {
  scope: "project";
  matches: ProjectGrepMatch[];
  /** Sessions scanned by this call (this session counts when the call reached it). */
  sessionsSearched: number;
  /** Earlier sessions of the project in the list. */
  earlierSessions: number;
  /** Earlier sessions whose file could not be read this time, by id. */
  unreadable: string[];
  skipped: SkippedFiles;
  scanCapped: boolean;
  scannedChars: number;
  work: number;
  workPerChar: number;
  nextCursor?: string;
}

interface Group {
  label: string;
  lines: string[];
  matches: RawMatch[];
  index: TranscriptIndex;
  ordinal: number;
}

function sessionLabel(source: ProjectSource, ordinal: number): string {
  if (ordinal === 0) return `this session ${source.current.id} · started ${source.current.started}`;
  const s = source.earlier[ordinal - 1];
  return `${s.id} · started ${s.started} · file ${s.file}`;
}

/**
 * Opens the earlier sessions of one call under its per-call bounds (sessions opened, bytes read from files whose
 * index is not cached). The first session a call reaches is always opened, so every call makes progress.
 */
class SessionOpener {
  private opened = 0;
  private read = 0;
  readonly unreadable: string[] = [];
  private readonly source: ProjectSource;
  private readonly bounds: ProjectBounds;
  constructor(source: ProjectSource, bounds: ProjectBounds) {
    this.source = source;
    this.bounds = bounds;
  }

  /** The index of earlier session `ordinal` (1-based), "bound" when a per-call bound stops the call here, or "unreadable". */
  async open(ordinal: number, mayStop: boolean): Promise<TranscriptIndex | "bound" | "unreadable"> {
    const session = this.source.earlier[ordinal - 1];
    const cached = this.source.isCached(session);
    const overRead = !cached && this.read > 0 && this.read + session.size > this.bounds.readBytesPerCall;
    if (mayStop && (this.opened >= this.bounds.sessionsPerCall || overRead)) return "bound";
    await this.source.pause();
    const got = await this.source.open(session);
    this.opened++;
    if (!cached) this.read += session.size;
    if (typeof got === "string") {
      this.unreadable.push(session.id);
      return "unreadable";
    }
    return got;
  }
}

/** The count of files left out, for the end of a result (other projects' sessions are counted in details only). */
function skippedNote(skipped: SkippedFiles, unreadable: number): string {
  const n = skipped.damaged + unreadable;
  return n
    ? `\nSkipped ${n} file${n === 1 ? "" : "s"} of the session directory that are not readable sessions (damaged, too large or not session files).`
    : "";
}

/**
 * `context_grep` with `scope: "project"`: this session first, then each earlier session of the project, newest
 * first, with the single-session semantics and page bounds over the whole call. Also bounded per call by how many
 * earlier sessions it opens and how many bytes it reads; a stop at any bound returns a cursor naming the session.
 */
export async function grepProject(
  source: ProjectSource,
  params: GrepParams,
  limits: RecallLimits,
  bounds: ProjectBounds = DEFAULT_PROJECT_BOUNDS,
  budget: ScanBudget = {},
): Promise<SearchOutcome<ProjectGrepDetails>> {
  const run = startGrepRun(params, limits, budget, 600);
  if (typeof run === "string") return { ok: false, error: run };
  const key = queryKey("grep", { ...params, scope: "project" });
  const ids = [source.current.id, ...source.earlier.map((s) => s.id)];
  let start: ProjectCursor = { session: 0, entry: 0, offset: 0, entryId: "" };
  if (params.cursor) {
    const cursor = decodeProject("p", key, params.cursor, ids, "context_grep");
    if (typeof cursor === "string") return { ok: false, error: cursor };
    start = cursor;
  }

  const groups: Group[] = [];
  const opener = new SessionOpener(source, bounds);
  const unreadable = opener.unreadable;
  let resume: ProjectCursor | undefined;
  let capped = false;
  let searched = 0;
  const overCaps = () => run.work >= limits.maxScanWork || run.overBudget?.() === true;

  for (let s = start.session; s < ids.length && !resume; s++) {
    const first = s === start.session;
    if (!first && overCaps()) {
      resume = { session: s, entry: 0, offset: 0, entryId: "" };
      capped = true;
      break;
    }
    let index: TranscriptIndex;
    if (s === 0) index = source.current.index;
    else {
      const got = await opener.open(s, !first);
      if (got === "bound") {
        resume = { session: s, entry: 0, offset: 0, entryId: "" };
        capped = true;
        break;
      }
      if (got === "unreadable") continue;
      index = got;
    }
    searched++;
    let at = { ordinal: 0, offset: 0 };
    if (first && start.entryId !== "") {
      const entry = index.entries[start.entry];
      if (entry?.id !== start.entryId) return { ok: false, error: STALE };
      if (start.offset > entry.text.length)
        return {
          ok: false,
          error: `invalid cursor: its position is past the end of entry ${entry.id}. Pass a cursor exactly as returned, or omit it`,
        };
      at = { ordinal: start.entry, offset: start.offset };
    }
    const suffix = s === 0 ? "" : ` · session ${ids[s]} (started ${source.earlier[s - 1].started})`;
    const group: Group = { label: sessionLabel(source, s), lines: [], matches: [], index, ordinal: s };
    // The session's heading line counts against the page while its matches are added; given back if it has none.
    const heading = `══ session ${group.label}`.length + 1;
    run.pageChars += heading;
    for (;;) {
      // Scan in slices and pause between them, so one large session never holds the event loop.
      run.workLimit = Math.min(limits.maxScanWork, run.work + bounds.sliceWork);
      const scan = scanIndex(index, run, at, suffix);
      group.lines.push(...scan.lines);
      group.matches.push(...scan.matches);
      if (scan.resume && scan.capped && !overCaps()) {
        at = scan.resume;
        await source.pause();
        continue;
      }
      if (scan.resume) {
        const entry = index.entries[scan.resume.ordinal];
        resume = { session: s, entry: scan.resume.ordinal, offset: scan.resume.offset, entryId: entry.id };
        capped = scan.capped;
      }
      break;
    }
    if (group.lines.length) groups.push(group);
    else run.pageChars -= heading;
  }

  const nextCursor = resume ? encodeProject("p", key, ids[resume.session], resume) : undefined;
  const what = describeQuery(params, run);
  const count = groups.reduce((n, g) => n + g.matches.length, 0);
  const entriesHit = groups.reduce((n, g) => n + new Set(g.matches.map((m) => m.ordinal)).size, 0);
  const earlier = source.earlier.length;
  const scope = `this session and ${earlier} earlier session${earlier === 1 ? "" : "s"} of this project, newest first`;
  const head = count
    ? `${count} matching line${count === 1 ? "" : "s"} in ${entriesHit} entr${entriesHit === 1 ? "y" : "ies"} of ${groups.length} session${groups.length === 1 ? "" : "s"} for ${what}${params.cursor ? " (continued)" : ""}; project scope: ${scope}. Lines are numbered within each entry; ▸ marks headers and section markers. Pass an earlier session's id as session to context_show_entry.`
    : `no${params.cursor ? " further" : ""} matches for ${what} in ${searched} session${searched === 1 ? "" : "s"} searched${resume ? " so far" : ""}; project scope: ${scope}.${run.includeRecall ? "" : " The recall tools' own calls and results are not searched; includeRecall: true adds them."}`;
  const body: string[] = [];
  for (const g of groups) body.push(`══ session ${g.label}`, ...g.lines);
  let text = body.join("\n");
  if (text.length > limits.maxChars - run.headerRoom)
    text = `${text.slice(0, limits.maxChars - run.headerRoom)}… [result cut at the page limit]`;
  const next = resume ? (source.earlier[resume.session - 1]?.id ?? source.current.id) : "";
  const foot = nextCursor
    ? capped
      ? `\nA per-call bound (sessions opened, bytes read, work or time) was reached; the search continues in session ${next}: call again with the same arguments and cursor "${nextCursor}".`
      : `\nMore matches may follow: call again with the same arguments and cursor "${nextCursor}".`
    : "";
  const matches: ProjectGrepMatch[] = groups.flatMap((g) =>
    g.matches.map((m) => ({
      ...reportMatch(g.index, m),
      session: ids[g.ordinal],
      ...(g.ordinal > 0 ? { sessionFile: source.earlier[g.ordinal - 1].file } : {}),
      sessionStarted: g.ordinal > 0 ? source.earlier[g.ordinal - 1].started : source.current.started,
      current: g.ordinal === 0,
    })),
  );
  return {
    ok: true,
    text: `${head}${text ? `\n${text}` : ""}${foot}${skippedNote(source.skipped, unreadable.length)}`,
    details: {
      scope: "project",
      matches,
      sessionsSearched: searched,
      earlierSessions: earlier,
      unreadable,
      skipped: source.skipped,
      scanCapped: capped,
      scannedChars: run.scanned,
      work: run.work,
      workPerChar: runCost(run),
      ...(nextCursor ? { nextCursor } : {}),
    },
    ...(nextCursor ? { nextCursor } : {}),
  };
}

// ---------------------------------------------------------------------------------------------------------
// list sessions

export interface ProjectListDetails {
  scope: "project";
  sessions: {
    id: string;
    file?: string;
    started: string;
    entries: number;
    firstUserMessage: string;
    current: boolean;
  }[];
  earlierSessions: number;
  unreadable: string[];
  skipped: SkippedFiles;
  nextCursor?: string;
}

function firstUser(index: TranscriptIndex): string {
  return index.entries.find((e) => e.role === "user")?.preview ?? "(no user message)";
}

/**
 * `context_list_entries { scope: "project" }`: this session and the project's earlier sessions, newest first, with
 * id, start date, first user message and entry count. Paged by the list page size and the per-call bounds.
 */
export async function listProjectSessions(
  source: ProjectSource,
  params: ListParams,
  limits: RecallLimits,
  bounds: ProjectBounds = DEFAULT_PROJECT_BOUNDS,
): Promise<SearchOutcome<ProjectListDetails>> {
  const key = queryKey("list", { ...params, scope: "project" });
  const ids = [source.current.id, ...source.earlier.map((s) => s.id)];
  let from = 0;
  if (params.cursor) {
    const cursor = decodeProject("q", key, params.cursor, ids, "context_list_entries");
    if (typeof cursor === "string") return { ok: false, error: cursor };
    from = cursor.session;
  }
  const rows: string[] = [];
  const listed: ProjectListDetails["sessions"] = [];
  const opener = new SessionOpener(source, bounds);
  const unreadable = opener.unreadable;
  let chars = 0;
  let next: number | undefined;
  for (let s = from; s < ids.length; s++) {
    let index: TranscriptIndex;
    let row: string;
    if (s === 0) {
      index = source.current.index;
      row = `${s + 1}. ${source.current.id} (this session) · started ${source.current.started}`;
    } else {
      const session = source.earlier[s - 1];
      const got = await opener.open(s, s > from);
      if (got === "bound") {
        next = s;
        break;
      }
      if (got === "unreadable") continue;
      index = got;
      row = `${s + 1}. ${session.id} · started ${session.started} · file ${session.file}`;
    }
    const first = firstUser(index);
    row += ` · ${index.entries.length} entries — ${first}`;
    if (listed.length >= limits.listPageSize || (listed.length > 0 && chars + row.length + 1 > limits.maxChars - 400)) {
      next = s;
      break;
    }
    rows.push(row);
    chars += row.length + 1;
    listed.push({
      id: ids[s],
      ...(s > 0 ? { file: source.earlier[s - 1].file } : {}),
      started: s > 0 ? source.earlier[s - 1].started : source.current.started,
      entries: index.entries.length,
      firstUserMessage: first,
      current: s === 0,
    });
  }
  const nextCursor =
    next === undefined
      ? undefined
      : encodeProject("q", key, ids[next], { session: next, entry: 0, offset: 0, entryId: "" });
  const earlier = source.earlier.length;
  const head = `${listed.length} session${listed.length === 1 ? "" : "s"} of this project listed (this session and ${earlier} earlier, newest first)${from ? `, continuing at #${from + 1}` : ""}. Pass an id as session to context_list_entries, context_show_entry, or use context_grep with scope "project":`;
  const foot = nextCursor ? `\nMore sessions follow: call again with scope "project" and cursor "${nextCursor}".` : "";
  return {
    ok: true,
    text: [head, ...rows].join("\n") + foot + skippedNote(source.skipped, unreadable.length),
    details: {
      scope: "project",
      sessions: listed,
      earlierSessions: earlier,
      unreadable,
      skipped: source.skipped,
      ...(nextCursor ? { nextCursor } : {}),
    },
    ...(nextCursor ? { nextCursor } : {}),
  };
}
