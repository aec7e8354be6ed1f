// The replay runs its rows one after another (a strategy's own rows side by side), so a long session holds one
// group's views, ledgers and per-request state at a time, not fourteen rows'. Each row's figures are the ones it gets replayed alone.
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { replaySession } from "../../src/lab/replay.ts";
import { defaultSettings, type RowFactory, type SessionSettings } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { generateSession } from "../../src/lab/sample/generate.ts";
import type { SessionEntry } from "../../src/log/entries.ts";

function sampleEntries(): SessionEntry[] {
  return generateSession(5151, 0, { tasks: 10 }).entries.filter((e): e is SessionEntry => e.type !== "session");
}

const withoutTimings = (value: unknown): unknown =>
  JSON.parse(JSON.stringify(value, (key, v) => (key === "latencyMs" ? undefined : v)));

describe("rows replayed in turn", () => {
  it("a row is created once the rows before it have heard the whole branch, or with them when its strategy declared them both", async () => {
    const branchLength = sampleEntries().length;
    const rows = selectRows(undefined).factories;
    const appended: number[] = [];
    const createdAfter: number[][] = [];
    const factories: RowFactory[] = rows.map((factory, k) =>
      Object.assign(
        (settings: SessionSettings) => {
          createdAfter.push(appended.slice());
          appended[k] = 0;
          const row = factory(settings);
          const append = row.append.bind(row);
          row.append = (entry) => {
            appended[k]++;
            append(entry);
          };
          return row;
        },
        { replaysWith: factory.replaysWith },
      ),
    );
    // The planned strategy declares two rows, which share its memos of the latest compaction.
    const together = rows.filter((factory) => factory.replaysWith === "planned").length;
    expect(together).toBe(2);
    await replaySession(
      { name: "s", cwd: "/home/dev/src/app", entries: sampleEntries() },
      { settings: defaultSettings(40_000), rows: factories, prices: DEFAULT_PRICES },
    );
    expect(createdAfter).toHaveLength(factories.length);
    for (const [k, counts] of createdAfter.entries()) {
      // The first row of k's group: rows before it are done, rows from it on have heard nothing yet.
      let first = k;
      while (first > 0 && rows[k].replaysWith !== undefined && rows[first - 1].replaysWith === rows[k].replaysWith)
        first--;
      expect(counts).toEqual([...Array(first).fill(branchLength), ...Array(k - first).fill(0)]);
    }
  });

  it("each row's figures are those it gets when replayed alone", async () => {
    const { factories } = selectRows(undefined);
    const settings = defaultSettings(40_000);
    const together = await replaySession(
      { name: "s", cwd: "/home/dev/src/app", entries: sampleEntries() },
      { settings, rows: factories, prices: DEFAULT_PRICES },
    );
    // The window makes rows act, so the figures carry acts, measured retention and needed items.
    expect(together.rows.filter((row) => row.actions.length > 0).length).toBeGreaterThan(3);
    for (const [k, factory] of factories.entries()) {
      const alone = await replaySession(
        { name: "s", cwd: "/home/dev/src/app", entries: sampleEntries() },
        { settings, rows: [factory], prices: DEFAULT_PRICES },
      );
      expect(withoutTimings(alone.rows[0])).toEqual(withoutTimings(together.rows[k]));
    }
  });
});
