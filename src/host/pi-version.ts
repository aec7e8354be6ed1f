// The oldest Pi this package runs on, and the check the extension entry and the CLI make before they load anything
// that needs Pi 1.6's exports. An older Pi (npm resolves the "*" peer to whatever is installed) would otherwise fail
// with an internal error naming a missing function. Pure string work; the callers read Pi's `VERSION`.

/** The oldest Pi release with the boundary and projection APIs this package uses. */
export const MINIMUM_PI = { major: 1, minor: 6 } as const;

/**
 * What is wrong with running on Pi `version`, or undefined when it is new enough. A version that does not read as
 * `major.minor…` (a development build reports `0.0.0` when it lacks its package data) is not held against it.
 */
export function piVersionProblem(version: unknown): string | undefined {
  if (typeof version !== "string") return undefined;
  const match = /^(\d+)\.(\d+)(?:\.\d+)?/.exec(version.trim());
  if (!match || version.trim() === "0.0.0") return undefined;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const recent = major > MINIMUM_PI.major || (major === MINIMUM_PI.major && minor >= MINIMUM_PI.minor);
  return recent ? undefined : `needs Pi ${MINIMUM_PI.major}.${MINIMUM_PI.minor} or newer (found ${match[0]})`;
}

/** Load Pi's package and check its version; the namespace import works on any Pi, whatever it exports. */
export async function checkInstalledPi(): Promise<string | undefined> {
  const pi: { VERSION?: unknown } = await import("@earendil-works/pi-coding-agent");
  return piVersionProblem(pi.VERSION);
}
