// Retries of a strategy's side request (preserve's tool-summary request) under Pi's own `settings.retry` policy and
// Pi's own transient-error rules, the way Pi retries its compaction and branch-summary requests. The wait between
// attempts is injectable, so tests never sleep.
import {
  isContextOverflow,
  isRetryableAssistantError,
  retryDelayMs,
  type AssistantMessage,
} from "@earendil-works/pi-ai";
import type { RetryNotice } from "../strategies/contract.ts";

/** Pi's `settings.retry` policy, as the host reads it. */
export interface RetryPolicyView {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxAgentDelayMs: number;
}

/** Pi's defaults for `settings.retry` (Pi 1.6 `SETTINGS_DEFAULTS.retry`). */
const PI_RETRY_DEFAULTS = { enabled: true, maxRetries: 3, baseDelayMs: 2_000, maxAgentDelayMs: 60_000 } as const;

/** Waits `ms`, or rejects as soon as `signal` aborts. */
export type Sleep = (ms: number, signal: AbortSignal | undefined) => Promise<void>;

/** The real wait. */
export const sleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason instanceof Error ? signal.reason : new Error("aborted"));
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });

const count = (v: unknown, fallback: number): number =>
  typeof v === "number" && Number.isFinite(v) && v >= 0 ? Math.floor(v) : fallback;

/** Pi's effective retry policy from its settings, with Pi's defaults where a value is unset. */
export function retryPolicyOf(settings: {
  retry?: { enabled?: unknown; maxRetries?: unknown; baseDelayMs?: unknown; maxAgentDelayMs?: unknown };
}): RetryPolicyView {
  const r = settings.retry ?? {};
  return {
    enabled: typeof r.enabled === "boolean" ? r.enabled : PI_RETRY_DEFAULTS.enabled,
    maxRetries: count(r.maxRetries, PI_RETRY_DEFAULTS.maxRetries),
    baseDelayMs: count(r.baseDelayMs, PI_RETRY_DEFAULTS.baseDelayMs),
    maxAgentDelayMs: count(r.maxAgentDelayMs, PI_RETRY_DEFAULTS.maxAgentDelayMs),
  };
}

/**
 * Run `produce` and, while its reply is a transient provider error (Pi's classification; a context overflow is never
 * one) and the policy allows, wait Pi's backoff and ask again. `onRetry` hears of each scheduled retry before the
 * wait. An abort during the wait ends the loop with the last reply.
 */
export async function retrying(
  produce: () => Promise<AssistantMessage>,
  policy: RetryPolicyView,
  signal: AbortSignal | undefined,
  onRetry: (notice: RetryNotice) => void,
  wait: Sleep = sleep,
): Promise<AssistantMessage> {
  let reply = await produce();
  for (let attempt = 1; policy.enabled && attempt <= policy.maxRetries; attempt++) {
    if (
      signal?.aborted ||
      reply.stopReason !== "error" ||
      isContextOverflow(reply) ||
      !isRetryableAssistantError(reply)
    )
      return reply;
    const delayMs = retryDelayMs(policy, attempt);
    onRetry({
      attempt,
      maxRetries: policy.maxRetries,
      delayMs,
      error: (reply.errorMessage ?? "provider error").slice(0, 200),
    });
    try {
      await wait(delayMs, signal);
    } catch {
      return reply;
    }
    reply = await produce();
  }
  return reply;
}
