// Text from session files on its way to a terminal: control characters (C0, DEL, C1) and bidirectional
// overrides become visible escapes, so a file cannot clear the screen, retitle the window, forge a line or
// reorder one. Pure string work; no I/O.

// Every C0 control, DEL, C1 (0x9b is CSI on some terminals), and the bidi controls of "Trojan Source".
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves raw: DEL, C1 and the bidi controls (it escapes C0 itself).
const UNSAFE_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** One field of output (a name, an id, a reason): every control character, newline included, escaped. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u{${code.toString(16)}}`;
  });
}

/** A whole block of output: each line made safe, the block's own line breaks kept. */
export function terminalLines(text: string): string {
  return text.split("\n").map(terminalSafe).join("\n");
}

/** JSON text made safe for a terminal without changing what it parses to (`\uXXXX` escapes). */
export function terminalJson(json: string): string {
  return json.replace(UNSAFE_IN_JSON, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
