// Where the lab's sessions come from: the generated sample, the user's Pi session directory, or paths.
import { constants as fsConstants } from "node:fs";
import { access, readdir, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { agentDir } from "../host/settings.ts";
import type { SessionEntry } from "../log/entries.ts";
import { InputError } from "./errors.ts";
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

/** Expand files and directories into session files. Missing paths and empty directories are input errors. */
export async function sessionFiles(paths: readonly string[]): Promise<string[]> {
  const files: string[] = [];
  for (const raw of paths) {
    const path = resolve(raw);
    const info = await stat(path).catch(() => undefined);
    if (!info) throw new InputError(`no such file or directory: ${raw}`);
    if (info.isDirectory()) {
      const found = await jsonlUnder(path);
      if (!found.length) throw new InputError(`no session files (*.jsonl) in ${raw}`);
      files.push(...found);
    } else if (info.isFile()) files.push(path);
    // A device or a pipe never ends or cannot be read twice; session files are regular files.
    else throw new InputError(`not a regular file: ${raw}`);
  }
  return files;
}

/** The user's own Pi sessions directory (honours PI_CODING_AGENT_DIR). */
export function userSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentDir(env), "sessions");
}

/** Short display name of a session file (file names may hold control characters; they are escaped). */
export function sessionName(path: string): string {
  return terminalSafe(basename(path));
}

/**
 * Check before a run that `path` can be written as the output of `flag`: its directory exists and is
 * writable, and the path itself is not a directory. Failing after an hour of replay would lose the run.
 */
export async function checkOutputPath(flag: string, raw: string): Promise<string> {
  const path = resolve(raw);
  const info = await stat(path).catch(() => undefined);
  if (info?.isDirectory()) throw new InputError(`cannot write ${flag} ${raw}: it is a directory`);
  const dir = dirname(path);
  const parent = await stat(dir).catch(() => undefined);
  if (!parent) throw new InputError(`cannot write ${flag} ${raw}: directory ${dir} does not exist`);
  if (!parent.isDirectory()) throw new InputError(`cannot write ${flag} ${raw}: ${dir} is not a directory`);
  const writable = await access(info ? path : dir, fsConstants.W_OK).then(() => true, () => false);
  if (!writable) throw new InputError(`cannot write ${flag} ${raw}: permission denied`);
  return path;
}
