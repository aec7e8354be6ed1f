// Where the lab's sessions come from: the generated sample, the user's Pi session directory, or paths.
import { existsSync } from "node:fs";
import { lstat, open, readdir, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { agentDir } from "../host/settings.ts";
import type { SessionEntry } from "../log/entries.ts";
import { InputError } from "./errors.ts";
import { pickRecent, type Recent } from "./recent.ts";
import { terminalSafe } from "./terminal-text.ts";
import type { SessionInput } from "./replay.ts";
import { generateSample } from "./sample/generate.ts";

export { InputError };

/** The generated sample as replay inputs. */
export function sampleInputs(seed: number): SessionInput[] {
  return generateSample(seed).map((s) => ({
    name: s.name,
    cwd: s.entries.find((e) => e.type === "session")?.cwd ?? "",
    entries: s.entries.filter((e): e is SessionEntry => e.type !== "session"),
  }));
}

async function jsonlUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const item of (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = join(dir, item.name);
    if (item.isDirectory()) out.push(...(await jsonlUnder(full)));
    else if (item.isFile() && item.name.endsWith(".jsonl")) out.push(full);
  }
  return out;
}

/** Longest first line read to recognise a session header (Pi's header is a few hundred bytes). */
const HEADER_BYTES = 64 * 1024;

/**
 * Refuse a file that is not a Pi session before any replay: its first line must be a JSON object of type
 * "session". `package.json`, a text file renamed .jsonl or an empty file would otherwise replay as nothing
 * and print a table of zeros with a recommendation.
 */
export async function checkSessionFile(path: string, raw = path): Promise<void> {
  const handle = await open(path, "r");
  let head: string;
  try {
    const buffer = Buffer.alloc(HEADER_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEADER_BYTES, 0);
    head = buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
  const shown = terminalSafe(raw);
  if (!head.trim()) throw new InputError(`not a Pi session file: ${shown} is empty`);
  const newline = head.indexOf("\n");
  const first = (newline === -1 ? head : head.slice(0, newline)).replace(/^\uFEFF/, "").trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(first);
  } catch {
    parsed = undefined;
  }
  if ((parsed as { type?: unknown } | null)?.type !== "session")
    throw new InputError(`not a Pi session file: ${shown} (its first line is not a session header)`);
}

/**
 * Expand files and directories into session files, each checked to be one. Missing paths, empty directories
 * and files that are not sessions are input errors. Only real directories and files are walked: a link is not
 * followed (a link to "." named like a session would make the walk endless).
 */
export async function sessionFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const raw of paths) {
    const path = resolve(raw);
    const info = await stat(path).catch((error: NodeJS.ErrnoException) => error);
    if (info instanceof Error)
      throw new InputError(
        info.code === "ELOOP"
          ? `a symbolic link that loops: ${raw}`
          : info.code === "EACCES"
            ? `permission denied: ${raw}`
            : `no such file or directory: ${raw}`,
      );
    if (info.isDirectory()) {
      const found = await jsonlUnder(path);
      if (!found.length) throw new InputError(`no session files (*.jsonl) in ${raw}`);
      files.push(...found);
    } else if (info.isFile()) files.push(path);
    // A device or a pipe never ends or cannot be read twice; session files are regular files.
    else throw new InputError(`not a regular file: ${raw}`);
  }
  // A file named twice (a folder and a file in it, `./x` and `x`, a link to it) is one session: replayed once, at
  // its first mention, so no total or recommendation counts it twice.
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const file of files) {
    const real = await realpath(file).catch(() => file);
    if (seen.has(real)) continue;
    seen.add(real);
    unique.push(file);
  }
  for (const file of unique) await checkSessionFile(file, relativeName(file, paths));
  return unique;
}

/** How to name a found file in a message: as the user gave it when it was given, else its full path. */
function relativeName(file: string, paths: readonly string[]): string {
  return paths.find((p) => resolve(p) === file) ?? file;
}

/**
 * The session files picked by `recent`, by the time each was last changed. Kept in the order given, so a run over
 * the same files reads the same.
 */
export async function newestSessions(files: readonly string[], recent: Recent): Promise<string[]> {
  const dated = await Promise.all(files.map(async (file) => ({ file, mtime: (await stat(file)).mtimeMs })));
  return pickRecent(dated, recent).map((d) => d.file);
}

/** The user's own Pi sessions directory (honours PI_CODING_AGENT_DIR). */
export function userSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentDir(env), "sessions");
}

/** Short display name of a session file (file names may hold control characters; they are escaped). */
export function sessionName(path: string): string {
  return terminalSafe(basename(path));
}

/** A name beside `path` that nothing else uses, for a probe or a file written before it takes `path`'s place. */
function besidePath(path: string, what: string): string {
  return join(dirname(path), `.${basename(path)}.${what}-${process.pid}-${Date.now().toString(36)}`);
}

/**
 * Why a file could not be created in `dir`, in words, from the error of creating it. The directory existed when
 * the lab checked it: ENOENT then means /proc or /sys (they exist but hold only the kernel's own files), unless
 * the directory was removed since.
 */
export function creationFailure(error: unknown, dir: string): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "EACCES" || code === "EPERM") return "permission denied";
  if (code === "EROFS") return "the file system is read-only";
  if (code === "ENOSPC" || code === "EDQUOT") return "no space left there";
  // A folder that exists and still answers ENOENT is a kernel file system; one removed meanwhile is just gone.
  if (code === "ENOENT")
    return existsSync(dir)
      ? "no file can be created there (a kernel file system such as /proc or /sys)"
      : "the folder no longer exists";
  return `cannot create a file there (${String(code ?? error)})`;
}

/** Why creating a file in `dir` fails, or undefined when it works (the probe file is removed again). */
async function cannotCreateIn(path: string): Promise<string | undefined> {
  const probe = besidePath(path, "probe");
  try {
    await (await open(probe, "wx")).close();
    await unlink(probe);
    return undefined;
  } catch (error) {
    return creationFailure(error, dirname(path));
  }
}

/**
 * Check before a run that `path` can be written as the output of `flag`: a new path, or an existing regular
 * file (not a link, a device or a directory), in a directory where a file can be created (probed). Failing
 * after an hour of replay would lose the run; a link planted at the path is refused, not followed.
 */
export async function checkOutputPath(flag: string, raw: string): Promise<string> {
  const path = resolve(raw);
  const info = await lstat(path).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new InputError(`cannot write ${flag} ${raw}: it is a symbolic link (not followed)`);
  if (info?.isDirectory()) throw new InputError(`cannot write ${flag} ${raw}: it is a directory`);
  if (info && !info.isFile()) throw new InputError(`cannot write ${flag} ${raw}: not a regular file`);
  const dir = dirname(path);
  const parent = await stat(dir).catch(() => undefined);
  if (!parent) throw new InputError(`cannot write ${flag} ${raw}: directory ${dir} does not exist`);
  if (!parent.isDirectory()) throw new InputError(`cannot write ${flag} ${raw}: ${dir} is not a directory`);
  const why = await cannotCreateIn(path);
  if (why) throw new InputError(`cannot write ${flag} ${raw}: ${why}`);
  return path;
}

/**
 * Write an output file checked by checkOutputPath: into a new file created exclusively beside it, then renamed
 * over the path. A link planted at the path meanwhile is replaced, never followed; a reader never sees half a file.
 */
export async function writeOutput(path: string, data: string): Promise<void> {
  const temp = besidePath(path, "partial");
  try {
    await writeFile(temp, data, { flag: "wx" });
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
}
