import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { describe, expect, it } from "vitest";
import {
  cacheReuse,
  DEFAULT_PRICES,
  messageBytes,
  parsePrices,
  requestCost,
  RequestTotals,
  sameMessage,
  seriesTokens,
} from "../../src/lab/metrics.ts";
import { View } from "../../src/lab/view.ts";
import { chars } from "./fixtures.ts";

// user messages of 400 characters are 100 tokens each; 40 characters are 10 tokens.
const msg = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 0 }) as AgentMessage;

describe("cache reuse arithmetic", () => {
  const a = msg(chars(400, "a"));
  const b = msg(chars(400, "b"));
  const c = msg(chars(40, "c"));
  const summary = msg(chars(40, "s"));

  it("counts the whole-message prefix shared with the previous request", () => {
    // [a] -> [a,b] -> [a,b,c]: cached 0, 100, 200 of prompts 100, 200, 210.
    const series = seriesTokens([[a], [a, b], [a, b, c]]);
    expect(series).toEqual([
      { prompt: 100, cached: 0 },
      { prompt: 200, cached: 100 },
      { prompt: 210, cached: 200 },
    ]);
    expect(cacheReuse(series)).toBeCloseTo(300 / 510, 10);
  });

  it("a compaction that rewrites the head breaks the cache, equal bytes in new objects do not", () => {
    // [a,b] -> [summary,c]: nothing shared. Then a byte-identical copy of [summary,c] plus b is cached up to c.
    const series = seriesTokens([
      [a, b],
      [summary, c],
      [msg(chars(40, "s")), msg(chars(40, "c")), b],
    ]);
    expect(series.map((r) => r.cached)).toEqual([0, 0, 20]);
    expect(series.map((r) => r.prompt)).toEqual([200, 20, 120]);
  });

  it("prices: cached tokens read at 0.1x, the rest written at 1.25x, side calls at input/output prices", () => {
    const cost = requestCost(
      [
        { prompt: 1000, cached: 0 },
        { prompt: 1200, cached: 1000 },
      ],
      [{ input: 500, output: 100 }],
      DEFAULT_PRICES,
    );
    // 1000*1.25 + (1000*0.1 + 200*1.25) + 500*1 + 100*5 = 1250 + 350 + 1000 = 2600
    expect(cost.units).toBeCloseTo(2600, 10);
    expect(cost.usd).toBeCloseTo((2600 / 1e6) * 3, 12);
    const custom = requestCost([{ prompt: 100, cached: 50 }], [], parsePrices("read=0.5,write=2,usd=10"));
    expect(custom.units).toBeCloseTo(50 * 0.5 + 50 * 2, 10);
  });

  it("running totals give exactly the figures of the full request list, without keeping it", () => {
    // Awkward fractions, so a different summation order would show in the last bits.
    const requests = Array.from({ length: 500 }, (_, i) => ({
      prompt: 1000 + ((i * 7919) % 3001),
      cached: (i * 104729) % 997,
    }));
    const sideCalls = [
      { input: 333, output: 77 },
      { input: 12_345, output: 1 },
    ];
    const prices = parsePrices("read=0.13,write=1.37,usd=2.9");
    const totals = new RequestTotals(prices);
    for (const r of requests) totals.add(r);
    expect(totals.count).toBe(500);
    expect(totals.prompt).toBe(requests.reduce((s, r) => s + r.prompt, 0));
    expect(totals.cached).toBe(requests.reduce((s, r) => s + r.cached, 0));
    expect(totals.reuse).toBe(cacheReuse(requests));
    expect(totals.cost(sideCalls)).toEqual(requestCost(requests, sideCalls, prices));
    expect(new RequestTotals(prices).reuse).toBe(0);
  });

  it("compares messages by their bytes without keeping a serialized copy", () => {
    const a = msg(chars(400, "a"));
    const copy = msg(chars(400, "a"));
    const other = msg(`${chars(399, "a")}b`);
    expect(sameMessage(a, copy)).toBe(true);
    expect(sameMessage(a, other)).toBe(false);
    // Same fingerprint inputs but a different field: still told apart byte for byte.
    expect(sameMessage(a, { ...a, timestamp: 1 } as AgentMessage)).toBe(false);
    expect(messageBytes(a)).toBe(JSON.stringify(a));
  });

  it("rejects malformed price specs", () => {
    expect(() => parsePrices("read=abc")).toThrow(/bad price/);
    expect(() => parsePrices("bogus=1")).toThrow(/bad price/);
  });
});

describe("View change tracking", () => {
  it("marks requests with the prefix unchanged since the previous one", () => {
    const view = new View();
    const a = msg(chars(400, "a"));
    const b = msg(chars(400, "b"));
    view.push(a);
    expect(view.markRequest()).toEqual({ prompt: 100, cached: 0 });
    view.push(b);
    expect(view.markRequest()).toEqual({ prompt: 200, cached: 100 });
    view.replaceAt(1, msg(chars(40, "m")));
    view.push(msg(chars(40, "c")));
    expect(view.markRequest()).toEqual({ prompt: 120, cached: 100 });
    // replaceAll keeps the cache for the equal head.
    view.replaceAll([a, msg(chars(40, "z"))]);
    expect(view.markRequest()).toEqual({ prompt: 110, cached: 100 });
  });
});
