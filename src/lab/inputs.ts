// Where the lab's sessions come from: the generated sample, the user's Pi session directory, or paths.
import { readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { agentDir } from "../host/settings.ts";
import type { SessionEntry } from "../log/entries.ts";
import type { SessionInput } from "./replay.ts";
import { generateSample } from "./sample/generate.ts";

/** A user-facing input problem: the CLI prints the message and exits 2. */
export class InputError extends Error {}

/** The generated sample as replay inputs. */
export function sampleInputs(seed: number): SessionInput[] {
  return generateSample(seed).map((s) => ({ name: s.name, entries: s.entries.filter((e): e is SessionEntry => e.type !== "session") }));
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
    } else files.push(path);
  }
  return files;
}

/** The user's own Pi sessions directory (honours PI_CODING_AGENT_DIR). */
export function userSessionsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentDir(env), "sessions");
}

/** Short display name of a session file. */
export function sessionName(path: string): string {
  return basename(path);
}
