// Preserve on both real Pi sessions, replayed turn by turn at a small window so checkpoints pile up: every earlier
// checkpoint's prefix stays byte-identical (invariant 5), tool results stay paired (invariant 1) and every user
// message reaches the final view verbatim.
import { describe, expect, it } from "vitest";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { textOf, type SessionEntry } from "../../../src/log/entries.ts";
import { LedgerType, LEDGER_FACTS } from "../../../src/strategies/catalog.ts";
import { projectBranch } from "../../../src/projection/project.ts";
import { estimateMessagesTokens } from "../../../src/projection/tokens.ts";
import { extractiveCheckpoint } from "../../../src/strategies/preserve/checkpoint.ts";
import { entryBefore } from "../../../src/strategies/shared/delta.ts";
import { decideTrigger } from "../../../src/strategies/preserve/reserve.ts";
import { loadRealSessions } from "../../properties/real-sessions.ts";

const WINDOW = 32_000;

const isCheckpoint = (m: AgentMessage) =>
  m.role === "custom" && (m as { customType?: string }).customType === LedgerType.preserve;
const checkpointPositions = (view: readonly AgentMessage[]) =>
  view.map((m, i) => (isCheckpoint(m) ? i : -1)).filter((i) => i >= 0);

describe("preserve on the real sessions", () => {
  for (const session of loadRealSessions()) {
    it(`${session.name}: checkpoints keep their prefixes, pair tool results and keep every user message`, () => {
      // The files' own native compactions are set aside so the whole history is raw, as in the lab.
      const source = session.entries.filter((e) => e.type !== "compaction");
      const branch: SessionEntry[] = [];
      const prefixes: string[] = [];
      let lastAssistant: string | undefined;
      let n = 0;
      const boundary = () => {
        if (!lastAssistant) return;
        const view = projectBranch(branch, LEDGER_FACTS).messages;
        const limitId = entryBefore(branch, lastAssistant);
        if (!limitId) return;
        if (
          !decideTrigger({ usageTokens: estimateMessagesTokens(view), contextWindow: WINDOW, compactableTokens: 1 })
            .checkpoint
        )
          return;
        const result = extractiveCheckpoint(branch, limitId, Number.POSITIVE_INFINITY);
        if (!result.ok) return;
        const { draft } = result;
        const last = branch.at(-1)!;
        branch.push({
          id: `preserve-${++n}`,
          parentId: last.id,
          timestamp: last.timestamp,
          type: "custom_message",
          customType: draft.customType,
          content: draft.content,
          display: true,
          details: draft.details,
        } as SessionEntry);
        const after = projectBranch(branch, LEDGER_FACTS).messages;
        // The previous checkpoint's prefix is unchanged by the new one (all of them are checked again at the end).
        const at = checkpointPositions(after);
        expect(at.length).toBe(prefixes.length + 1);
        if (prefixes.length) expect(JSON.stringify(after.slice(0, at[prefixes.length - 1] + 1))).toBe(prefixes.at(-1));
        prefixes.push(JSON.stringify(after.slice(0, at[prefixes.length] + 1)));
      };
      for (const entry of source) {
        const isStep =
          entry.type === "message" && (entry.message.role === "assistant" || entry.message.role === "user");
        if (isStep) boundary(); // the previous step's results are all in: this is its turn_end
        branch.push(entry);
        if (entry.type === "message" && entry.message.role === "assistant") lastAssistant = entry.id;
      }
      expect(n).toBeGreaterThan(3);

      const final = projectBranch(branch, LEDGER_FACTS).messages;
      const at = checkpointPositions(final);
      prefixes.forEach((json, k) =>
        expect(JSON.stringify(final.slice(0, at[k] + 1)) === json, `prefix of checkpoint ${k + 1}`).toBe(true),
      );
      const calls = new Set<string>();
      for (const m of final) {
        if (m.role === "assistant") for (const b of m.content ?? []) if (b.type === "toolCall") calls.add(b.id);
        if (m.role === "toolResult") expect(calls.has(m.toolCallId)).toBe(true);
      }
      const finalUsers = final.filter((m) => m.role === "user").map((m) => textOf(m.content));
      const sourceUsers = source.flatMap((e) =>
        e.type === "message" && e.message.role === "user" ? [textOf(e.message.content)] : [],
      );
      expect(finalUsers).toEqual(sourceUsers);
      // Most of the tool traffic is gone from the view.
      expect(estimateMessagesTokens(final)).toBeLessThan(
        estimateMessagesTokens(projectBranch(source, LEDGER_FACTS).messages) / 2,
      );
    }, 120_000);
  }
});
