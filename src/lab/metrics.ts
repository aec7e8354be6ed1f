// Request accounting for the lab: prefix-cache reuse between consecutive provider requests and the cost they
// imply under configurable prices. Deterministic arithmetic; no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { estimateMessageTokens } from "../projection/tokens.ts";
import { InputError } from "./errors.ts";

/** Price multipliers relative to one uncached input token, plus the dollar price of that token. */
export interface Prices {
  /** Uncached input (requests that opt out of caching, such as summarization calls). */
  input: number;
  /** Input written to the prefix cache. */
  cacheWrite: number;
  /** Input read from the prefix cache. */
  cacheRead: number;
  /** Generated tokens (only the extra generation a strategy causes: summaries). */
  output: number;
  /** Dollars per million input tokens at multiplier 1. */
  usdPerMTok: number;
}

export const DEFAULT_PRICES: Prices = { input: 1, cacheWrite: 1.25, cacheRead: 0.1, output: 5, usdPerMTok: 3 };

/** Parse `input=1,write=1.25,read=0.1,output=5,usd=3` (any subset) over the defaults. */
export function parsePrices(spec: string | undefined, base: Prices = DEFAULT_PRICES): Prices {
  const prices = { ...base };
  if (!spec) return prices;
  const names: Record<string, keyof Prices> = {
    input: "input",
    write: "cacheWrite",
    cachewrite: "cacheWrite",
    read: "cacheRead",
    cacheread: "cacheRead",
    output: "output",
    usd: "usdPerMTok",
  };
  for (const part of spec.split(",")) {
    const [rawKey, rawValue] = part.split("=");
    const key = names[rawKey?.trim().toLowerCase() ?? ""];
    const value = Number(rawValue);
    if (!key || !Number.isFinite(value) || value < 0)
      throw new InputError(`bad price "${part}" (expected input=…, write=…, read=…, output=…, usd=…)`);
    prices[key] = value;
  }
  return prices;
}

/** One conversation request: its prompt size and the part of it that repeats the previous request's prefix. */
export interface RequestTokens {
  prompt: number;
  cached: number;
}

/** One extra uncached model call a strategy makes (a summary). */
export interface SideCall {
  input: number;
  output: number;
}

/** Share of prompt tokens, over all requests, served from the prefix of the previous request. */
export function cacheReuse(requests: readonly RequestTokens[]): number {
  let prompt = 0;
  let cached = 0;
  for (const r of requests) {
    prompt += r.prompt;
    cached += r.cached;
  }
  return prompt ? cached / prompt : 0;
}

/**
 * Cost in input-token equivalents and dollars. Each request reads its cached prefix and writes the rest to the
 * cache (a breakpoint at the end of every request, as prefix caching with automatic breakpoints does);
 * side calls are uncached.
 */
export function requestCost(
  requests: readonly RequestTokens[],
  sideCalls: readonly SideCall[],
  prices: Prices = DEFAULT_PRICES,
): { units: number; usd: number } {
  let units = 0;
  for (const r of requests) units += r.cached * prices.cacheRead + (r.prompt - r.cached) * prices.cacheWrite;
  for (const call of sideCalls) units += call.input * prices.input + call.output * prices.output;
  return { units, usd: (units / 1_000_000) * prices.usdPerMTok };
}

/** A message's wire bytes as JSON. */
export function messageBytes(message: AgentMessage): string {
  return JSON.stringify(message);
}

/**
 * A fingerprint of a message's wire bytes (a 30-bit hash that mixes in their length), memoized per message object.
 * The bytes themselves are not kept: a replay compares a message held for the whole session with a copy at
 * most a few times, and remembering its serialization would double its memory for the rest of the run. A 30-bit
 * integer is stored in the memo's own slot, where a record or a wider number would be one more heap object per
 * message; equal fingerprints are confirmed byte for byte, so a collision costs one comparison, never a wrong answer.
 */
const fingerprints = new WeakMap<object, number>();

function fingerprint(message: AgentMessage): number {
  let known = fingerprints.get(message);
  if (known === undefined) {
    const text = messageBytes(message);
    // FNV-1a over UTF-16 code units, seeded with the length, folded to 30 bits.
    let hash = Math.imul(0x811c9dc5 ^ text.length, 0x01000193);
    for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
    known = (hash ^ (hash >>> 30)) & 0x3fffffff;
    fingerprints.set(message, known);
  }
  return known;
}

/** True when two messages put the same bytes on the wire (fingerprints first; equal ones are confirmed byte for byte). */
export function sameMessage(a: AgentMessage, b: AgentMessage): boolean {
  if (a === b) return true;
  if (fingerprint(a) !== fingerprint(b)) return false;
  return messageBytes(a) === messageBytes(b);
}

/** Number of leading messages two requests share byte for byte. */
export function commonPrefix(previous: readonly AgentMessage[], next: readonly AgentMessage[]): number {
  const n = Math.min(previous.length, next.length);
  let i = 0;
  while (i < n && sameMessage(previous[i], next[i])) i++;
  return i;
}

/**
 * Running request accounting for one row of a replay: the same sums, in the same order, as `cacheReuse` and
 * `requestCost` over the full list, without keeping a record per request.
 */
export class RequestTotals {
  count = 0;
  prompt = 0;
  cached = 0;
  private units = 0;
  private readonly prices: Prices;

  constructor(prices: Prices) {
    this.prices = prices;
  }

  add(request: RequestTokens): void {
    this.count++;
    this.prompt += request.prompt;
    this.cached += request.cached;
    this.units += request.cached * this.prices.cacheRead + (request.prompt - request.cached) * this.prices.cacheWrite;
  }

  /** Share of prompt tokens served from the previous request's prefix (as `cacheReuse`). */
  get reuse(): number {
    return this.prompt ? this.cached / this.prompt : 0;
  }

  /** Cost of the requests plus `sideCalls` (as `requestCost`). */
  cost(sideCalls: readonly SideCall[]): { units: number; usd: number } {
    let units = this.units;
    for (const call of sideCalls) units += call.input * this.prices.input + call.output * this.prices.output;
    return { units, usd: (units / 1_000_000) * this.prices.usdPerMTok };
  }
}

const tokenMemo = new WeakMap<object, number>();

/** Estimated tokens of a message, memoized per message object (the estimator is the project's one). */
export function messageTokens(message: AgentMessage): number {
  let tokens = tokenMemo.get(message);
  if (tokens === undefined) {
    tokens = estimateMessageTokens(message);
    tokenMemo.set(message, tokens);
  }
  return tokens;
}

/**
 * Request accounting for a plain series of requests: each request's cached part is its whole-message common
 * prefix with the previous request. Providers cache on block boundaries, so a partly matching message counts
 * as a miss.
 */
export function seriesTokens(requests: readonly (readonly AgentMessage[])[]): RequestTokens[] {
  const out: RequestTokens[] = [];
  let previous: readonly AgentMessage[] = [];
  for (const request of requests) {
    const shared = commonPrefix(previous, request);
    let prompt = 0;
    let cached = 0;
    request.forEach((m, i) => {
      const t = messageTokens(m);
      prompt += t;
      if (i < shared) cached += t;
    });
    out.push({ prompt, cached });
    previous = request;
  }
  return out;
}
