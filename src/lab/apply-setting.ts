// The lab's recommendation as something a user can act on: the settings file Pi reads, the exact JSON to merge
// into it (under the `contextLedger` key: pasted at the top level it would be ignored), and `--apply`, which
// merges it for them after asking, keeping every other key of the file.
import { lstat, readFile, realpath, rename, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { createInterface } from "node:readline/promises";
import { agentDir } from "../host/settings.ts";
import { InputError } from "./errors.ts";

/** The global Pi settings file: $PI_CODING_AGENT_DIR/settings.json, else ~/.pi/agent/settings.json. */
export function settingsFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(agentDir(env), "settings.json");
}

/** The JSON to merge, as it would sit in the file. */
export function pasteText(value: Readonly<Record<string, unknown>>): string {
  return JSON.stringify({ contextLedger: value }, null, 2);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * The settings file's text with `value` merged into its `contextLedger` object: every other key of the file, and
 * every other key of `contextLedger` and of its nested objects, stays as it was. `existing` undefined is no file.
 */
export function mergeSetting(
  existing: string | undefined,
  value: Readonly<Record<string, unknown>>,
  file = "settings.json",
): string {
  let root: unknown = {};
  if (existing?.trim()) {
    try {
      root = JSON.parse(existing);
    } catch (error) {
      throw new InputError(
        `cannot apply: ${file} is not valid JSON (${error instanceof Error ? error.message : String(error)}); fix it or merge by hand`,
      );
    }
  }
  if (!isObject(root)) throw new InputError(`cannot apply: ${file} does not hold a JSON object; merge by hand`);
  const merge = (into: unknown, from: Readonly<Record<string, unknown>>): Record<string, unknown> => {
    const out: Record<string, unknown> = isObject(into) ? { ...into } : {};
    for (const [key, v] of Object.entries(from)) out[key] = isObject(v) ? merge(out[key], v) : v;
    return out;
  };
  return `${JSON.stringify({ ...root, contextLedger: merge(root.contextLedger, value) }, null, 2)}\n`;
}

/** Before a replay: `--apply` asks on a terminal; without one it needs `--yes`, or it would wait for no one. */
export function checkApply(apply: boolean, yes: boolean, stdin: { isTTY?: boolean } = process.stdin): void {
  if (apply && !yes && !stdin.isTTY)
    throw new InputError(
      "--apply asks before it changes your settings, and there is no terminal to ask on: add --yes to apply without asking",
    );
}

/**
 * Merge `value` into the settings file, after asking unless `yes`. A settings file that is a link (dotfiles) is
 * written where it points; the new text goes to a file beside it first, then takes its place.
 * Returns a line saying what happened.
 */
export async function applySetting(
  value: Readonly<Record<string, unknown>>,
  file: string,
  yes: boolean,
  ask: (question: string) => Promise<string> = askOnTerminal,
): Promise<string> {
  if (!yes) {
    const answer = (await ask(`Merge ${JSON.stringify({ contextLedger: value })} into ${file}? [y/N] `))
      .trim()
      .toLowerCase();
    if (answer !== "y" && answer !== "yes") return `Not applied; ${file} is unchanged.`;
  }
  const target = (await lstat(file).catch(() => undefined))?.isSymbolicLink() ? await realpath(file) : file;
  const existing = await readFile(target, "utf8").catch((error: { code?: string }) => {
    if (error.code === "ENOENT") return undefined;
    throw new InputError(`cannot apply: cannot read ${file} (${error.code ?? String(error)})`);
  });
  const text = mergeSetting(existing, value, file);
  const temp = join(dirname(target), `.${basename(target)}.apply-${process.pid}`);
  try {
    await writeFile(temp, text, { flag: "wx" });
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new InputError(`cannot apply: cannot write ${file} (${(error as { code?: string }).code ?? String(error)})`);
  }
  return `Applied: ${file} now sets ${JSON.stringify({ contextLedger: value })}; its other settings are unchanged.`;
}

async function askOnTerminal(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
}
