// Display paths for checkpoints: file paths made relative to the session cwd, and the cwd shortened to `.`
// inside shell commands. Pure string work on POSIX-style paths; no I/O.
import { posix } from "node:path";

/** Strip trailing slashes so `/a/b/` and `/a/b` compare equal (the root stays `/`). */
function trimSlash(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, "") || "/" : path;
}

/**
 * The path a checkpoint shows for a file-tool argument: relative to `cwd` when the file lies inside it,
 * absolute otherwise. Relative inputs are normalized (`./a//b` -> `a/b`); one that climbs out of the cwd
 * (`../lib/a.ts`) is resolved against it, so it names the same entry as its absolute spelling. `~` paths are
 * kept as written because expanding them would need the home directory.
 */
export function displayPath(path: string, cwd: string): string {
  if (path === "" || path.startsWith("~")) return path;
  const base = trimSlash(cwd);
  if (!path.startsWith("/")) {
    const normalized = trimSlash(posix.normalize(path));
    if (normalized === ".." || normalized.startsWith("../"))
      return base.startsWith("/") ? absolutePath(normalized, base) : normalized;
    return normalized === "" ? "." : normalized;
  }
  const absolute = trimSlash(posix.normalize(path));
  if (!base.startsWith("/")) return absolute;
  if (absolute === base) return ".";
  const prefix = base === "/" ? "/" : `${base}/`;
  return absolute.startsWith(prefix) ? absolute.slice(prefix.length) : absolute;
}

/** Absolute form of a path argument, resolved against `cwd` (display only: no filesystem access). */
export function absolutePath(path: string, cwd: string): string {
  if (path.startsWith("/")) return trimSlash(posix.normalize(path));
  return trimSlash(posix.normalize(posix.join(cwd || "/", path)));
}

/** Last segment of a path. */
export function baseName(path: string): string {
  return posix.basename(trimSlash(path));
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// Characters that may precede or follow the cwd when it starts or ends a path inside a command line.
const BEFORE = `(^|[\\s"'=:(\\[{;,|&<>@\`])`;
const AFTER = `(?=$|[/\\s"'):;,|&<>\\]}\`])`;

/**
 * Replace the cwd by `.` where it appears as a whole path prefix in a shell command. Display only: the raw
 * command in the session is untouched. `/repo` does not match inside `/repo2` or `/x/repo`. A cwd of `/`
 * is left alone, since shortening it would rewrite every absolute path.
 */
export function abbreviateCwd(command: string, cwd: string): string {
  const base = trimSlash(cwd);
  if (!base.startsWith("/") || base === "/") return command;
  const pattern = new RegExp(`${BEFORE}${escapeRegExp(base)}${AFTER}`, "g");
  return command.replace(pattern, (_match, before: string) => `${before}.`);
}
