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
  const names: Record<string, keyof Prices> = { input: "input", write: "cacheWrite", cachewrite: "cacheWrite", read: "cacheRead", cacheread: "cacheRead", output: "output", usd: "usdPerMTok" };
  for (const part of spec.split(",")) {
    const [rawKey, rawValue] = part.split("=");
    const key = names[rawKey?.trim().toLowerCase() ?? ""];
    const value = Number(rawValue);
    if (!key || !Number.isFinite(value) || value < 0) throw new InputError(`bad price "${part}" (expected input=…, write=…, read=…, output=…, usd=…)`);
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
export function requestCost(requests: readonly RequestTokens[], sideCalls: readonly SideCall[], prices: Prices = DEFAULT_PRICES): { units: number; usd: number } {
  let units = 0;
  for (const r of requests) units += r.cached * prices.cacheRead + (r.prompt - r.cached) * prices.cacheWrite;
  for (const call of sideCalls) units += call.input * prices.input + call.output * prices.output;
  return { units, usd: (units / 1_000_000) * prices.usdPerMTok };
}

const serialized = new WeakMap<object, string>();

/** The bytes a message contributes to a request (memoized per message object). */
export function messageBytes(message: AgentMessage): string {
  let text = serialized.get(message);
  if (text === undefined) {
    text = JSON.stringify(message);
    serialized.set(message, text);
  }
  return text;
}

/** True when two messages put the same bytes on the wire. */
export function sameMessage(a: AgentMessage, b: AgentMessage): boolean {
  return a === b || messageBytes(a) === messageBytes(b);
}

/** Number of leading messages two requests share byte for byte. */
export function commonPrefix(previous: readonly AgentMessage[], next: readonly AgentMessage[]): number {
  const n = Math.min(previous.length, next.length);
  let i = 0;
  while (i < n && sameMessage(previous[i], next[i])) i++;
  return i;
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
