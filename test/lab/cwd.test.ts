// Each session replays in its own working directory, read from its header: a checkpoint shows absolute
// paths under the cwd relative to it (never as "home/u/…" without its slash), and a path probe counts as
// kept in either form.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import { DEFAULT_PRICES } from "../../src/lab/metrics.ts";
import { extractProbes, viewRetention, viewText } from "../../src/lab/probes.ts";
import { replaySession } from "../../src/lab/replay.ts";
import type { LabResult } from "../../src/lab/results.ts";
import { defaultSettings, visibleMessages } from "../../src/lab/row.ts";
import { selectRows } from "../../src/lab/rows/registry.ts";
import { Ledger, readingSession, sessionJsonl } from "./fixtures.ts";

const CWD = "/home/u/proj";

const session = () => readingSession(CWD);

describe("per-session cwd", () => {
  it("checkpoint and planned render absolute paths under the session's cwd relative to it; path probes stay kept", async () => {
    const l = session();
    const views = new Map<string, readonly AgentMessage[]>();
    const result = await replaySession(
      { name: "abs", cwd: CWD, entries: l.entries },
      {
        settings: defaultSettings(40_000),
        rows: selectRows("checkpoint,planned").factories,
        prices: DEFAULT_PRICES,
        onFinalView: (_s, row, messages) => views.set(row.id, messages),
      },
    );
    for (const row of result.rows) {
      expect(row.compactions).toBeGreaterThan(0);
      // Never an absolute path with its leading slash cut off.
      expect(viewText(views.get(row.info.id)!)).not.toMatch(/(^|[^/])home\/u\/proj/m);
    }
    // The checkpoint lists every compacted read, so every path probe stays.
    const checkpoint = result.rows.find((r) => r.info.id === "checkpoint")!;
    expect(viewText(views.get("checkpoint")!)).toMatch(/src\/mod0\.ts/);
    expect(checkpoint.retention.byKind.path).toEqual({ kept: 30, total: 30 });
  });

  it("a path probe counts in its absolute form or relative to the cwd, not elsewhere", () => {
    const l = new Ledger();
    l.call("x", { path: `${CWD}/src/a.ts` });
    l.call("y", { path: "/etc/hosts" });
    const probes = extractProbes(l.entries, CWD).filter((p) => p.kind === "path");
    const view = (text: string): AgentMessage[] => [{ role: "user", content: [{ type: "text", text }], timestamp: 0 }];
    const sourceOf = () => [];
    expect(viewRetention(probes, view("read src/a.ts and /etc/hosts"), sourceOf).kept).toBe(2);
    expect(viewRetention(probes, view(`read ${CWD}/src/a.ts`), sourceOf).kept).toBe(1);
    expect(viewRetention(probes, view("read etc/hosts and src/b.ts"), sourceOf).kept).toBe(0);
    // Without a known cwd only the exact form counts.
    expect(
      viewRetention(
        extractProbes(l.entries).filter((p) => p.kind === "path"),
        view("src/a.ts"),
        sourceOf,
      ).kept,
    ).toBe(0);
    expect(visibleMessages(l.entries[0])).toHaveLength(1);
  });

  it("the CLI takes the cwd from each session file's header", () => {
    const dir = mkdtempSync(join(tmpdir(), "lab-cwd-"));
    const file = join(dir, "abs.jsonl");
    writeFileSync(file, sessionJsonl(session().entries, CWD));
    const repo = resolve(fileURLToPath(new URL("../../", import.meta.url)));
    const json = join(dir, "out.json");
    const r = spawnSync(
      process.execPath,
      [
        join(repo, "src/lab/bin.ts"),
        "lab",
        file,
        "--window",
        "40k",
        "--strategies",
        "checkpoint",
        "--json",
        json,
        "--no-report",
        "--quiet",
      ],
      { encoding: "utf8" },
    );
    expect(r.status).toBe(0);
    const out = JSON.parse(readFileSync(json, "utf8")) as LabResult;
    expect(out.sessions[0].cwd).toBe(CWD);
    expect(out.sessions[0].rows[0].compactions).toBeGreaterThan(0);
    expect(out.sessions[0].rows[0].retention.byKind.path).toEqual({ kept: 30, total: 30 });
  });
});
