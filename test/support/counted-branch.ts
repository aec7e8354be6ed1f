// A branch array that counts how often one of its entries is read: tests of a planner's work state its bound in
// entries read, not in time.
import type { SessionEntry } from "../../src/log/entries.ts";

/** `entries` behind a proxy that counts every indexed read; the proxy is the array a planner is handed. */
export function countedBranch(entries: SessionEntry[] = []): { branch: SessionEntry[]; reads: () => number } {
  let reads = 0;
  const branch = new Proxy(entries, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) reads++;
      return Reflect.get(target, key, receiver);
    },
  });
  return { branch, reads: () => reads };
}
