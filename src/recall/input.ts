// Bounds on what a recall tool call may pass in, and the one way its values are echoed back in a message, so
// an oversized argument never comes back whole. Pure: no I/O.

/** Longest entry id (or id prefix) accepted by context_show_entry; Pi's ids are 8 characters. */
export const MAX_ID_LENGTH = 256;
/** Longest context_lookup question accepted: one precise question, not a document. */
export const MAX_QUESTION_LENGTH = 4_000;

export { quoted } from "../log/display.ts";
