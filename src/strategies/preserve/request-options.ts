// The options Pi sends with every live model request, rebuilt for a side request that continues it (preserve's
// checkpoint request). Pi 1.6 shows extensions the messages of a live request (`context_with_system`) and a
// provider-specific payload (`before_provider_request`), but not the request options. So they are derived from the
// same sources Pi's own request path reads: the session id, the thinking level the agent loop recorded on the live
// response, and Pi's effective settings (`pi.getSettings()`), with Pi's defaults where a setting is unset.
import type { ModelThinkingLevel, ThinkingBudgets, ThinkingLevel, Transport } from "@earendil-works/pi-ai";

/** The settings Pi's request path reads (a structural subset of Pi's `Settings`). */
export interface PiRequestSettings {
  transport?: Transport;
  thinkingBudgets?: ThinkingBudgets;
  httpIdleTimeoutMs?: number | "disabled";
  websocketConnectTimeoutMs?: number | "disabled";
  retry?: { provider?: { timeoutMs?: number; maxRetries?: number; maxRetryDelayMs?: number } };
}

/** The cache- and transport-relevant options of a live request. */
export interface LiveRequestOptions {
  /** The prompt-cache key and routing id providers use. */
  sessionId: string;
  /** Absent when the live request asked for no reasoning. */
  reasoning?: ThinkingLevel;
  transport: Transport;
  thinkingBudgets?: ThinkingBudgets;
  timeoutMs: number;
  websocketConnectTimeoutMs?: number;
  maxRetries?: number;
  maxRetryDelayMs: number;
}

/** Pi's defaults for the options above (Pi 1.6: settings defaults and the HTTP idle timeout). */
const PI_DEFAULTS = {
  transport: "auto",
  httpIdleTimeoutMs: 300_000,
  maxRetryDelayMs: 60_000,
  disabledTimeoutMs: 2_147_483_647,
} as const;

/** Pi's reading of a timeout setting: a non-negative number (floored), "disabled" as 0, anything else unset. */
function timeoutSetting(value: unknown): number | undefined {
  if (value === "disabled") return 0;
  if (typeof value === "string" && value.trim()) return timeoutSetting(Number(value));
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.floor(value) : undefined;
}

/**
 * The options of the live request. `thinkingLevel` is the level the live request asked for ("off" or absent: none),
 * as Pi records it on the response.
 */
export function liveRequestOptions(
  settings: PiRequestSettings,
  sessionId: string,
  thinkingLevel: ModelThinkingLevel | undefined,
): LiveRequestOptions {
  const provider = settings.retry?.provider ?? {};
  const idle = timeoutSetting(settings.httpIdleTimeoutMs) ?? PI_DEFAULTS.httpIdleTimeoutMs;
  const websocket = timeoutSetting(settings.websocketConnectTimeoutMs);
  const options: LiveRequestOptions = {
    sessionId,
    transport: settings.transport ?? PI_DEFAULTS.transport,
    timeoutMs: provider.timeoutMs ?? (idle === 0 ? PI_DEFAULTS.disabledTimeoutMs : idle),
    maxRetryDelayMs: provider.maxRetryDelayMs ?? PI_DEFAULTS.maxRetryDelayMs,
  };
  if (thinkingLevel && thinkingLevel !== "off") options.reasoning = thinkingLevel;
  if (settings.thinkingBudgets) options.thinkingBudgets = settings.thinkingBudgets;
  if (websocket !== undefined) options.websocketConnectTimeoutMs = websocket;
  if (provider.maxRetries !== undefined) options.maxRetries = provider.maxRetries;
  return options;
}
