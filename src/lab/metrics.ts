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
 * True when two messages put the same bytes on the wire: `JSON.stringify(a) === JSON.stringify(b)`, decided by
 * walking both values side by side instead of writing them out. A part the two share by reference is the same by
 * definition and is not read, so a projection's rebuilt copy (a new object around the same content) costs a few
 * comparisons, and two different messages stop at their first difference. Serializing both, as this did, cost a
 * full write-out of each on every rebuilt message of every projection.
 */
export function sameMessage(a: AgentMessage, b: AgentMessage): boolean {
  if (a === b) return true;
  try {
    return sameJson(resolve(a, ""), resolve(b, ""), TOP, 0);
  } catch (error) {
    // A value the walk does not follow (a BigInt, a very deep nesting): the serializer decides, or throws as it did.
    if (error !== UNWALKED) throw error;
    return messageBytes(a) === messageBytes(b);
  }
}

/** Where a value sits, which decides what an unserializable one (undefined, a function) writes. */
const TOP = 0;
const IN_ARRAY = 1;
const IN_OBJECT = 2;
type Place = typeof TOP | typeof IN_ARRAY | typeof IN_OBJECT;

/** Thrown to hand a comparison back to the serializer. */
const UNWALKED = Symbol("unwalked");
/** Nesting followed before the serializer takes over (messages are a few levels deep). */
const MAX_DEPTH = 64;

/** A value written as nothing: undefined, a function, a symbol. */
const ABSENT = Symbol("absent");

/**
 * A value as the serializer sees it at `key` of its holder: after `toJSON`, boxed primitives unwrapped, non-finite
 * numbers as null, and the unwritable as {@link ABSENT}. Objects and arrays are returned as they are.
 */
function resolve(value: unknown, key: string): unknown {
  let v = value;
  if (v !== null && (typeof v === "object" || typeof v === "function")) {
    const toJSON = (v as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") v = toJSON.call(v, key);
  }
  if (typeof v === "bigint") throw UNWALKED;
  if (v instanceof Number) v = Number(v);
  else if (v instanceof String) v = String(v);
  else if (v instanceof Boolean) v = v.valueOf();
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (v === undefined || typeof v === "function" || typeof v === "symbol") return ABSENT;
  return v;
}

function sameJson(a: unknown, b: unknown, place: Place, depth: number): boolean {
  let x = a;
  let y = b;
  if (place === IN_ARRAY) {
    if (x === ABSENT) x = null;
    if (y === ABSENT) y = null;
  }
  if (x === y) return true;
  if (x === null || y === null || typeof x !== "object" || typeof y !== "object") return false;
  if (depth > MAX_DEPTH) throw UNWALKED;
  const isArray = Array.isArray(x);
  if (isArray !== Array.isArray(y)) return false;
  if (isArray) {
    const xs = x as unknown[];
    const ys = y as unknown[];
    if (xs.length !== ys.length) return false;
    for (let i = 0; i < xs.length; i++) {
      if (xs[i] === ys[i] && (xs[i] === null || typeof xs[i] !== "object")) continue;
      const key = String(i);
      if (!sameJson(resolve(xs[i], key), resolve(ys[i], key), IN_ARRAY, depth + 1)) return false;
    }
    return true;
  }
  const xo = x as Record<string, unknown>;
  const yo = y as Record<string, unknown>;
  const yKeys = Object.keys(yo);
  let at = 0;
  for (const key of Object.keys(xo)) {
    const xv = resolve(xo[key], key);
    if (xv === ABSENT) continue;
    // The next key of y that is written.
    let yv: unknown = ABSENT;
    while (at < yKeys.length && (yv = resolve(yo[yKeys[at]], yKeys[at])) === ABSENT) at++;
    if (at >= yKeys.length || yKeys[at] !== key) return false;
    at++;
    if (!sameJson(xv, yv, IN_OBJECT, depth + 1)) return false;
  }
  for (; at < yKeys.length; at++) if (resolve(yo[yKeys[at]], yKeys[at]) !== ABSENT) return false;
  return true;
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
