// Errors the CLI reports to the user as one line with exit code 2 (bad flags, bad paths, bad values).

/** A user-facing input problem: the CLI prints the message and exits 2. */
export class InputError extends Error {}

/** The first line of an error's message, without Node's advice after it. */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n")[0].replace(/\. To specify a positional argument.*$/, "");
}
