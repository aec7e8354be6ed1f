// One-line tool-call signatures for checkpoints: identifying paths in full, bulky payloads reduced to
// sizes, every other argument a capped JSON prefix. Pure string work; no I/O.
import { argsObject, PATH_KEYS, type Outcome, type ToolCallView } from "./conversation.ts";
import { abbreviateCwd, displayPath } from "./paths.ts";
import { lineSafeJson } from "../../log/display.ts";

/** Longest JSON prefix an argument keeps before the ellipsis. */
export const ARGUMENT_PREFIX_CHARS = 160;
/** The one ellipsis appended to a shortened argument. */
export const ELLIPSIS = "…";

/** Tools whose path argument identifies a file or directory, shown in full. */
const FILE_TOOLS = new Set(["read", "write", "edit", "ls", "find", "grep"]);
/** Tools whose `command` argument is a shell command line. */
const SHELL_TOOLS = new Set(["bash", "shell", "sh", "powershell", "pwsh"]);

const SIMPLE_NAME = /^[A-Za-z0-9_.:/-]+$/;

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

/**
 * Cut an already JSON-encoded string to at most `max` UTF-16 units plus one ellipsis. The cut never splits
 * an escape sequence (`\n`, `\u00e9`) or a surrogate pair, so the kept prefix is always well formed.
 */
export function capEncoded(encoded: string, max = ARGUMENT_PREFIX_CHARS): string {
  if (encoded.length <= max) return encoded;
  let cut = 0;
  let i = 0;
  while (i < max) {
    if (encoded[i] === "\\") {
      const width = encoded[i + 1] === "u" ? 6 : 2;
      if (i + width > max) break;
      i += width;
    } else if (isHighSurrogate(encoded.charCodeAt(i))) {
      if (i + 2 > max) break;
      i += 2;
    } else {
      i += 1;
    }
    cut = i;
  }
  return encoded.slice(0, cut) + ELLIPSIS;
}

/** JSON encoding of any value, capped like an argument. `undefined` encodes as `null`. */
export function jsonPrefix(value: unknown, max = ARGUMENT_PREFIX_CHARS): string {
  let encoded: string;
  try {
    encoded = lineSafeJson(JSON.stringify(value) ?? "null");
  } catch {
    // Cyclic or BigInt values cannot come from JSONL, but a live message could carry one.
    encoded = lineSafeJson(JSON.stringify(String(value)));
  }
  return capEncoded(encoded, max);
}

/** A name shown bare when it is simple, JSON-encoded and capped otherwise. */
export function displayName(name: string): string {
  return SIMPLE_NAME.test(name) && name.length <= ARGUMENT_PREFIX_CHARS ? name : jsonPrefix(name);
}

function chars(value: unknown): string {
  return typeof value === "string" ? `(${value.length} chars)` : jsonPrefix(value);
}

/** Render the arguments of an edit's `edits` array as a count; each element's texts are never shown. */
function editsCount(value: unknown): string {
  return Array.isArray(value) ? String(value.length) : jsonPrefix(value);
}

/**
 * The argument list of a tool call as `key=value` pairs. File paths are relative to `cwd` where possible
 * and never shortened; write bodies and edit texts become character counts; shell commands show the cwd
 * as `.`; everything else is a capped JSON prefix (multi-line values stay on one line as `\n` escapes).
 */
export function formatArguments(name: string, args: unknown, cwd: string): string {
  const object = argsObject(args);
  if (!object) return args === undefined ? "" : jsonPrefix(args);
  const parts: string[] = [];
  const fileTool = FILE_TOOLS.has(name);
  const shellTool = SHELL_TOOLS.has(name);
  for (const key of Object.keys(object)) {
    const value = object[key];
    const label = displayName(key);
    if (fileTool && (PATH_KEYS as readonly string[]).includes(key) && typeof value === "string") {
      parts.push(`${label}=${lineSafeJson(JSON.stringify(displayPath(value, cwd)))}`);
    } else if (name === "write" && key === "content") {
      parts.push(`${label}=${chars(value)}`);
    } else if (name === "edit" && key === "edits") {
      parts.push(`${label}=${editsCount(value)}`);
    } else if (
      name === "edit" &&
      (key === "oldText" || key === "newText" || key === "old_string" || key === "new_string")
    ) {
      parts.push(`${label}=${chars(value)}`);
    } else if (shellTool && key === "command" && typeof value === "string") {
      parts.push(`${label}=${jsonPrefix(abbreviateCwd(value, cwd))}`);
    } else {
      parts.push(`${label}=${jsonPrefix(value)}`);
    }
  }
  return parts.join(" ");
}

/** `name args → outcome`: the body of a call line. */
export function formatSignature(call: ToolCallView, outcome: Outcome, cwd: string): string {
  const args = formatArguments(call.name, call.arguments, cwd);
  return `${displayName(call.name)}${args ? ` ${args}` : ""} → ${outcome}`;
}

/** The body of a user `!` shell execution line: command with the cwd shortened, and its exit status. */
export function formatShellExecution(command: string, exitCode: unknown, cancelled: boolean, cwd: string): string {
  const status = cancelled ? "cancelled" : typeof exitCode === "number" ? `exit=${exitCode}` : "exit=unknown";
  return `command=${jsonPrefix(abbreviateCwd(command, cwd))} ${status}`;
}
