// Trusted `<keepContext>` spans: which lines of a user message's text the planned strategy must never delete.
// Pure: no I/O. Callers apply it to user text only; the same tags anywhere else are ordinary data.

const OPEN = "<keepContext>";
const CLOSE = "</keepContext>";

/** True when the whole line (surrounding whitespace aside) is `<keepContext>…</keepContext>`. */
function isInline(trimmed: string): boolean {
  return trimmed.length > OPEN.length + CLOSE.length - 1 && trimmed.startsWith(OPEN) && trimmed.endsWith(CLOSE);
}

/**
 * Which lines of one user message are pinned. A line holding only `<keepContext>` opens a span that runs through
 * the next line holding only `</keepContext>`, both tag lines included; a line that is one whole
 * `<keepContext>…</keepContext>` pins itself. Tags inside a line of other text pin nothing.
 * An unclosed span runs to the end of the message: the user asked to keep something, so the doubt keeps it.
 */
export function pinnedLines(lines: readonly string[]): boolean[] {
  const pinned = new Array<boolean>(lines.length).fill(false);
  let open = false;
  for (let i = 0; i < lines.length; i++) {
    const trimmed = lines[i].trim();
    if (open) {
      pinned[i] = true;
      if (trimmed === CLOSE) open = false;
    } else if (trimmed === OPEN) {
      pinned[i] = true;
      open = true;
    } else if (isInline(trimmed)) {
      pinned[i] = true;
    }
  }
  return pinned;
}
