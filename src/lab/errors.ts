// Errors the CLI reports to the user as one line with exit code 2 (bad flags, bad paths, bad values).

/** A user-facing input problem: the CLI prints the message and exits 2. */
export class InputError extends Error {}
