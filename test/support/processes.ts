// Processes a test started, found by a marker in their command line (a temporary path only that test uses), so
// a test can assert that none is left and kill whatever is. Linux: reads /proc.
import { readdirSync, readFileSync } from "node:fs";

/** Pids of live processes whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      // A zombie has an empty command line and runs nothing.
      if (cmdline.includes(marker)) out.push(Number(name));
    } catch {
      // Gone between the listing and the read.
    }
  }
  return out;
}

/** Wait (up to `ms`) until no process carries `marker`; returns those still running. */
export async function settled(marker: string, ms = 5_000): Promise<number[]> {
  const deadline = Date.now() + ms;
  for (;;) {
    const left = processesWith(marker);
    if (!left.length || Date.now() > deadline) return left;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGKILL every process carrying `marker`: a test's clean-up, whatever happened. */
export function killAll(marker: string): void {
  for (const pid of processesWith(marker)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
