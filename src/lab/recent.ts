// `--last N` and `--since <date>`: which of a run's session files are recent enough to replay. Pure, and free of
// the lab's heavier modules, because the CLI's waiting parent picks the same files to size the lab's child.
import { InputError } from "./errors.ts";
import { terminalSafe } from "./terminal-text.ts";

/** Which recent sessions to keep: the `last` most recently changed, and only those changed at or after `since` (ms). */
export interface Recent {
  last?: number;
  since?: number;
}

/** Parse `--last` and `--since`; undefined when neither is given. */
export function recentOptions(last: string | undefined, since: string | undefined): Recent | undefined {
  if (last === undefined && since === undefined) return undefined;
  const out: Recent = {};
  if (last !== undefined) {
    const n = Number(last);
    if (!/^\d+$/.test(last.trim()) || !Number.isSafeInteger(n) || n < 1)
      throw new InputError(`bad --last "${terminalSafe(last)}" (a count of sessions, 1 or more)`);
    out.last = n;
  }
  if (since !== undefined) {
    const ms = Date.parse(since);
    if (!Number.isFinite(ms))
      throw new InputError(`bad --since "${terminalSafe(since)}" (a date such as 2026-11-01 or 2026-11-01T09:00)`);
    out.since = ms;
  }
  return out;
}

/** A session file with the time it last changed (Pi appends to a session as it goes, so that is its last activity). */
export interface Dated {
  mtime: number;
}

/** The files `recent` picks, kept in the order given, so a run over the same files reads the same. */
export function pickRecent<T extends Dated>(files: readonly T[], recent: Recent): T[] {
  let kept = files
    .map((file, at) => ({ file, at }))
    .filter((d) => recent.since === undefined || d.file.mtime >= recent.since);
  if (recent.last !== undefined)
    kept = kept.sort((a, b) => b.file.mtime - a.file.mtime || a.at - b.at).slice(0, recent.last);
  return kept.sort((a, b) => a.at - b.at).map((d) => d.file);
}
