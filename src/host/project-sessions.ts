// The disk side of project-scope recall: which directory holds the user's sessions, which files in it are sessions
// of this cwd, and each file's transcript index, built lazily from an asynchronous read and reused while the
// file's size and modification time stay the same. The search itself is pure (src/recall/project.ts).
import { readFile, open as openFile, readdir, lstat } from "node:fs/promises";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { CONFIG_DIR_NAME, migrateSessionEntries, type ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FileEntry, SessionEntry } from "../log/entries.ts";
import { assignLegacyIds, parseLine } from "../log/jsonl.ts";
import {
  branchOf,
  orderSessions,
  parseSessionHeader,
  type CurrentSession,
  type ProjectSession,
  type ProjectSource,
  type SessionHeaderInfo,
  type SkippedFiles,
} from "../recall/project.ts";
import { appendEntry, createTranscript, type TranscriptIndex } from "../recall/transcript.ts";
import { agentDir } from "./settings.ts";
import { fileLines } from "./session-file.ts";

/** A session file larger than this is skipped (counted as damaged): its index would not fit a sane memory budget. */
export const MAX_SESSION_FILE_BYTES = 512 * 1024 * 1024;
/** Longest header line read to decide whether a file is a session of this cwd. */
const HEADER_BYTES = 64 * 1024;
/** Entries of the session directory looked at per listing. */
const MAX_DIRECTORY_ENTRIES = 10_000;
/** Characters of earlier sessions' indexes kept in memory; least recently used ones go first. */
export const MAX_CACHED_CHARS = 400_000_000;
/** Entries rendered between two pauses while an index is built. */
const ENTRIES_PER_PAUSE = 2_000;

/** Yield to the event loop: pending I/O and timers run before the next slice of work. */
export const pause = (): Promise<void> => new Promise((done) => setImmediate(done));

type SessionManagerView = ExtensionContext["sessionManager"];

/**
 * Pi's default session directory of a cwd: one folder per working directory under `<agent dir>/sessions`, its
 * name the cwd with separators turned into dashes, between `--` marks (docs/session-format.md).
 */
export function defaultSessionDir(cwd: string, agent: string): string {
  return join(
    resolve(agent),
    "sessions",
    `--${resolve(cwd)
      .replace(/^[/\\]/, "")
      .replace(/[/\\:]/g, "-")}--`,
  );
}

const expandHome = (path: string): string =>
  path === "~" ? homedir() : path.startsWith("~/") ? join(homedir(), path.slice(2)) : path;

async function settingsSessionDir(file: string, base: string): Promise<string | undefined> {
  try {
    const value = (JSON.parse(await readFile(file, "utf8")) as { sessionDir?: unknown }).sessionDir;
    return typeof value === "string" && value.trim() !== "" ? resolve(base, expandHome(value.trim())) : undefined;
  } catch {
    return undefined;
  }
}

/** The directory the project scope reads, or why it refuses to read the one in use. */
export type SessionDirChoice = { dir: string } | { refused: string };

/**
 * The user's own session directory for this cwd: the one the current session is stored in (Pi's `--session-dir`,
 * `PI_CODING_AGENT_SESSION_DIR`, `sessionDir` setting or the default under the agent directory), or for a session
 * kept in memory the directory Pi would use. A directory that only the project's own `.pi/settings.json` names is
 * refused: a repository must not point recall at files it supplies.
 */
export async function projectSessionDir(
  sm: SessionManagerView,
  env: NodeJS.ProcessEnv = process.env,
): Promise<SessionDirChoice> {
  const cwd = resolve(sm.getCwd());
  const agent = agentDir(env);
  const fromEnv = env.PI_CODING_AGENT_SESSION_DIR
    ? resolve(cwd, expandHome(env.PI_CODING_AGENT_SESSION_DIR))
    : undefined;
  const fromGlobal = await settingsSessionDir(join(agent, "settings.json"), cwd);
  const inUse = sm.getSessionDir();
  const defaultDir = resolve(agent, "sessions");
  const dir = inUse ? resolve(inUse) : (fromEnv ?? fromGlobal ?? defaultSessionDir(cwd, agent));
  const fromProject = await settingsSessionDir(join(cwd, CONFIG_DIR_NAME, "settings.json"), cwd);
  const isDefault = dir.startsWith(`${defaultDir}/`) || dir === defaultDir;
  if (fromProject === dir && !isDefault && dir !== fromEnv && dir !== fromGlobal) {
    return {
      refused: `the session directory in use was chosen by this project's ${CONFIG_DIR_NAME}/settings.json; the project scope reads only a session directory you chose (the default, --session-dir, PI_CODING_AGENT_SESSION_DIR or the global sessionDir setting)`,
    };
  }
  return { dir };
}

interface FileStamp {
  size: number;
  mtimeMs: number;
}

interface CachedHeader extends FileStamp {
  header: SessionHeaderInfo | string;
}

interface CachedIndex extends FileStamp {
  index: TranscriptIndex;
}

/** The listing of one call: the sessions found and the stamp each had when listed. */
interface Listing {
  dir: string;
  sessions: ProjectSession[];
  stamps: Map<string, FileStamp>;
  skipped: SkippedFiles;
}

async function readHeaderLine(path: string): Promise<string | undefined> {
  const handle = await openFile(path, "r");
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_BYTES, 0);
    const text = buffer.subarray(0, bytesRead);
    const nl = text.indexOf(10);
    if (nl < 0 && bytesRead === HEADER_BYTES) return undefined;
    return text
      .subarray(0, nl < 0 ? bytesRead : nl)
      .toString("utf8")
      .replace(/\r$/, "");
  } finally {
    await handle.close();
  }
}

/**
 * Sessions of this cwd in the user's session directory and their transcript indexes. One store lives as long as
 * the extension; its caches are keyed by absolute path and checked against size and mtime on every call.
 */
export class ProjectSessionStore {
  private readonly headers = new Map<string, CachedHeader>();
  private readonly indexes = new Map<string, CachedIndex>();
  /** Builds under way, so parallel calls that open one file read it once. */
  private readonly building = new Map<string, Promise<TranscriptIndex | string>>();
  private cachedChars = 0;

  /** What a project-scope call searches, or why it cannot run. */
  async source(
    sm: SessionManagerView,
    current: TranscriptIndex,
    env: NodeJS.ProcessEnv = process.env,
  ): Promise<ProjectSource | { refused: string }> {
    const choice = await projectSessionDir(sm, env);
    if ("refused" in choice) return choice;
    const listing = await this.list(choice.dir, sm);
    const header = sm.getHeader();
    const self: CurrentSession = { id: sm.getSessionId(), started: header?.timestamp ?? "", index: current };
    return {
      current: self,
      earlier: listing.sessions,
      skipped: listing.skipped,
      isCached: (session) => this.isCached(join(listing.dir, session.file), listing.stamps.get(session.file)),
      open: (session) => this.open(join(listing.dir, session.file), session, resolve(sm.getCwd())),
      pause,
    };
  }

  private isCached(path: string, stamp: FileStamp | undefined): boolean {
    const hit = this.indexes.get(path);
    return !!hit && !!stamp && hit.size === stamp.size && hit.mtimeMs === stamp.mtimeMs;
  }

  /** The earlier sessions of `sm`'s cwd in `dir`, newest first; everything else is counted, never read further. */
  private async list(dir: string, sm: SessionManagerView): Promise<Listing> {
    const skipped: SkippedFiles = { damaged: 0, otherProject: 0 };
    const sessions: ProjectSession[] = [];
    const stamps = new Map<string, FileStamp>();
    const cwd = resolve(sm.getCwd());
    const currentId = sm.getSessionId();
    const currentFile = sm.getSessionFile();
    let names: string[];
    try {
      names = (await readdir(dir)).sort().slice(0, MAX_DIRECTORY_ENTRIES);
    } catch {
      return { dir, sessions, stamps, skipped };
    }
    const seen = new Set<string>();
    for (const name of names) {
      const path = join(dir, name);
      if (currentFile && resolve(currentFile) === path) continue;
      if (!name.endsWith(".jsonl")) {
        skipped.damaged++;
        continue;
      }
      try {
        // lstat: a link could lead out of the session directory, so only regular files are read.
        const stat = await lstat(path);
        if (!stat.isFile() || stat.size > MAX_SESSION_FILE_BYTES) {
          skipped.damaged++;
          continue;
        }
        const stamp = { size: stat.size, mtimeMs: stat.mtimeMs };
        let cached = this.headers.get(path);
        if (!cached || cached.size !== stamp.size || cached.mtimeMs !== stamp.mtimeMs) {
          const line = await readHeaderLine(path);
          cached = { ...stamp, header: line === undefined ? "header line too long" : parseSessionHeader(line) };
          this.headers.set(path, cached);
        }
        const header = cached.header;
        if (typeof header === "string") {
          skipped.damaged++;
          continue;
        }
        if (resolve(header.cwd) !== cwd) {
          skipped.otherProject++;
          continue;
        }
        // The current session, and a copy of another file's id, are not listed twice.
        if (header.id === currentId || seen.has(header.id)) continue;
        seen.add(header.id);
        sessions.push({ file: name, id: header.id, started: header.started, size: stat.size });
        stamps.set(name, stamp);
      } catch {
        skipped.damaged++;
      }
    }
    return { dir, sessions: orderSessions(sessions), stamps, skipped };
  }

  /** The index of one earlier session, from the cache while the file is unchanged, else read asynchronously. */
  private async open(path: string, session: ProjectSession, cwd: string): Promise<TranscriptIndex | string> {
    let stat;
    try {
      stat = await lstat(path);
    } catch {
      return "the file is gone";
    }
    if (!stat.isFile() || stat.size > MAX_SESSION_FILE_BYTES) return "not a regular file of a sane size";
    const hit = this.indexes.get(path);
    if (hit && hit.size === stat.size && hit.mtimeMs === stat.mtimeMs) {
      // Most recently used last.
      this.indexes.delete(path);
      this.indexes.set(path, hit);
      return hit.index;
    }
    const key = `${path}\u0000${stat.size}\u0000${stat.mtimeMs}`;
    const pending = this.building.get(key);
    if (pending) return pending;
    const build = buildFileIndex(path, session, cwd).then((built) => {
      if (typeof built !== "string") this.remember(path, { size: stat.size, mtimeMs: stat.mtimeMs, index: built });
      return built;
    });
    this.building.set(key, build);
    try {
      return await build;
    } finally {
      this.building.delete(key);
    }
  }

  private remember(path: string, entry: CachedIndex): void {
    const old = this.indexes.get(path);
    if (old) {
      this.cachedChars -= old.index.chars;
      this.indexes.delete(path);
    }
    this.indexes.set(path, entry);
    this.cachedChars += entry.index.chars;
    for (const [key, value] of this.indexes) {
      if (this.cachedChars <= MAX_CACHED_CHARS || key === path) break;
      this.indexes.delete(key);
      this.cachedChars -= value.index.chars;
    }
  }
}

/**
 * Read a session file line by line (streamed, so the event loop runs between chunks), check that it is still the
 * session that was listed, and index the branch it resumes on. Bad lines are skipped; a file that is not the listed
 * session any more is reported, not indexed.
 */
export async function buildFileIndex(
  path: string,
  session: ProjectSession,
  cwd: string,
): Promise<TranscriptIndex | string> {
  const all: FileEntry[] = [];
  try {
    let first = true;
    for await (const item of fileLines(path)) {
      if ("tooLong" in item) continue;
      if (first) {
        first = false;
        const header = parseSessionHeader(item.text);
        if (typeof header === "string") return header;
        if (header.id !== session.id || resolve(header.cwd) !== cwd) return "the file changed since it was listed";
      }
      const parsed = parseLine(item.text);
      if (parsed && "entry" in parsed) all.push(parsed.entry);
    }
  } catch {
    return "the file could not be read";
  }
  try {
    assignLegacyIds(all);
    migrateSessionEntries(all);
  } catch {
    return "the file's entries could not be migrated";
  }
  const entries = all.filter(
    (e): e is SessionEntry => e.type !== "session" && typeof (e as { id?: unknown }).id === "string",
  );
  const index = createTranscript();
  const branch = branchOf(entries);
  for (let i = 0; i < branch.length; i++) {
    if (i > 0 && i % ENTRIES_PER_PAUSE === 0) await pause();
    try {
      appendEntry(index, branch[i]);
    } catch {
      // An entry whose shape the renderer cannot take is left out rather than losing the session.
    }
  }
  return index;
}
