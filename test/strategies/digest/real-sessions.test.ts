// The digest strategy on both real Pi sessions, replayed request by request through its lab row (the same digestDue and
// planDigest the host calls) at the lab's 128k window with the default policy: every digest keeps the prefix before it
// byte-identical, tool results stay paired, every user message stays verbatim, no request exceeds the window, and the
// verbatim probes (commands, paths, errors, results, constraints) stay in view.
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { textOf } from "../../../src/log/entries.ts";
import { LedgerType } from "../../../src/strategies/catalog.ts";
import { extractProbes, viewRetention } from "../../../src/lab/probes.ts";
import { replayBranch } from "../../../src/lab/replay.ts";
import { defaultSettings, visibleMessages } from "../../../src/lab/row.ts";
import { labRow } from "../../../src/lab/rows/registry.ts";
import { loadRealSessions } from "../../properties/real-sessions.ts";

const WINDOW = 128_000;
const isDigest = (m: AgentMessage) =>
  m.role === "custom" && (m as { customType?: string }).customType === LedgerType.digest;

describe("digest on the real sessions", () => {
  for (const session of loadRealSessions()) {
    it(`${session.name}: byte-stable prefixes, paired results, every user message, no request over the window, probes kept`, async () => {
      const { branch } = replayBranch(session.entries);
      const row = labRow("digest", { ...defaultSettings(WINDOW), cwd: "" });
      const probes = extractProbes(branch);
      const sourceOf = (p: { index: number }) => visibleMessages(branch[p.index]);
      const prefixes: string[] = [];
      let acts = 0;
      let lowest = 1;
      for (let i = 0; i < branch.length; i++) {
        const entry = branch[i];
        if (entry.type === "message" && entry.message.role === "assistant") {
          const action = await row.beforeRequest();
          const view = row.view.messages;
          const at = view.flatMap((m, k) => (isDigest(m) ? [k] : []));
          if (action) {
            acts++;
            expect(at.length).toBe(prefixes.length + 1);
            // The view up to the previous digest is unchanged by the new one (invariant 5).
            if (prefixes.length)
              expect(JSON.stringify(view.slice(0, at[prefixes.length - 1] + 1))).toBe(prefixes.at(-1));
            prefixes.push(JSON.stringify(view.slice(0, at.at(-1)! + 1)));
            lowest = Math.min(
              lowest,
              viewRetention(
                probes.filter((p) => p.index < i),
                view,
                sourceOf,
              ).share,
            );
          }
          expect(row.view.tokens).toBeLessThanOrEqual(WINDOW);
        }
        row.append(entry);
      }
      expect(acts).toBeGreaterThan(3);
      const final = row.view.messages;
      const at = final.flatMap((m, k) => (isDigest(m) ? [k] : []));
      prefixes.forEach((json, k) =>
        expect(JSON.stringify(final.slice(0, at[k] + 1)) === json, `prefix of digest ${k + 1}`).toBe(true),
      );
      const calls = new Set<string>();
      for (const m of final) {
        if (m.role === "assistant") for (const b of m.content ?? []) if (b.type === "toolCall") calls.add(b.id);
        if (m.role === "toolResult") expect(calls.has(m.toolCallId)).toBe(true);
      }
      const users = (messages: readonly AgentMessage[]) =>
        messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
      expect(users(final)).toEqual(users(branch.flatMap(visibleMessages)));
      expect(viewRetention(probes, final, sourceOf).share).toBeGreaterThanOrEqual(0.95);
      expect(lowest).toBeGreaterThanOrEqual(0.9);
    }, 120_000);
  }
});
