// Strings cut from a longer one keep it alive: V8 represents a slice of 13 characters or more as a view into its
// parent. Code that keeps short pieces of session text for long (names, probes, items) keeps its own copy, or it
// pins every message text the pieces came from.

/** `text` as a string of its own, holding no reference to a longer string it may have been cut from. */
export function ownCopy(text: string): string {
  // The concatenation is flattened into a new string before the slice is taken, so the slice's parent is that
  // new string, one character longer than `text`.
  return ` ${text}`.slice(1);
}
