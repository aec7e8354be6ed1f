// The one model-call helper: strategies (planners, checkpoint writers) and recall resolve their model here, and
// strategies' completion requests run under one deadline. Provider error text is shown bounded and never persisted.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { ModelCall, ModelReply } from "../strategies/contract.ts";
import { PlanError } from "../strategies/shared/fallback.ts";
import { forTerminal, quoted } from "../log/display.ts";

/**
 * Model access on the active model, or on `provider/model` from the global settings (split at the first slash, so
 * the model id may hold more). A configured model that does not resolve is not silently replaced: every call
 * rejects with a reason naming the setting, so the strategy falls back to Pi's native compaction with a warning.
 * Without any model, `complete` is absent and strategies that can work without one do.
 */
export function modelCall(ctx: ExtensionContext, configured: string | undefined): ModelCall {
  const call: ModelCall = {};
  const model = resolveModel(ctx, configured);
  if (configured && !model) {
    call.complete = async () => {
      throw new PlanError("model-unresolved", `contextLedger.plannerModel "${configured}" is not a known model`);
    };
    return call;
  }
  if (!model) return call;
  call.model = `${model.provider}/${model.id}`;
  call.complete = async (request, signal) => {
    call.used = true;
    const context = {
      systemPrompt: request.system,
      messages: [{ role: "user" as const, content: request.prompt, timestamp: 0 }],
      ...(request.tools?.length ? { tools: [...request.tools] } : {}),
    };
    const reply = await withDeadline(
      (callSignal) =>
        ctx.modelRegistry.complete(model, context, {
          signal: callSignal,
          ...(request.maxOutputTokens ? { maxTokens: request.maxOutputTokens } : {}),
          ...(request.timeoutMs ? { timeoutMs: request.timeoutMs } : {}),
        }),
      signal,
      request.timeoutMs,
    );
    // Prompt tokens whether or not the provider served them from its cache.
    const u = reply.usage;
    call.usage = { input: (u?.input ?? 0) + (u?.cacheRead ?? 0) + (u?.cacheWrite ?? 0), output: u?.output ?? 0 };
    if (reply.stopReason === "aborted" && signal.aborted) throw abortReason(signal);
    if (reply.stopReason === "error" || reply.stopReason === "aborted") {
      // The provider's words are shown once, bounded, and never persisted: they may quote the request.
      if (reply.errorMessage)
        ctx.ui.notify(
          forTerminal(`context-ledger: the planner model ${call.model} reported: ${quoted(reply.errorMessage, 200)}`),
          "warning",
        );
      throw new PlanError("model-error", `the planner call ended with ${reply.stopReason}`, {
        stopReason: reply.stopReason,
      });
    }
    const answer: ModelReply = {
      text: reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(""),
      toolCalls: reply.content.flatMap((b) =>
        b.type === "toolCall" ? [{ name: b.name, arguments: b.arguments }] : [],
      ),
      model: call.model,
      usage: call.usage,
      stopReason: reply.stopReason,
    };
    return answer;
  };
  return call;
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new Error("compaction aborted");
}

/**
 * Run a model call under a deadline. The call gets a signal that aborts on the caller's abort or at the deadline,
 * and the result also races both, so a provider that ignores its signal cannot hold the compaction.
 */
export function withDeadline<T>(
  work: (signal: AbortSignal) => Promise<T>,
  signal: AbortSignal,
  timeoutMs: number | undefined,
): Promise<T> {
  const deadline = new AbortController();
  const timer = timeoutMs
    ? setTimeout(
        () => deadline.abort(new PlanError("timeout", `the planner gave no answer within ${timeoutMs} ms`)),
        timeoutMs,
      )
    : undefined;
  const both = AbortSignal.any([signal, deadline.signal]);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.aborted ? abortReason(signal) : abortReason(deadline.signal));
    const done = () => {
      clearTimeout(timer);
      both.removeEventListener("abort", onAbort);
    };
    if (both.aborted) {
      done();
      onAbort();
      return;
    }
    both.addEventListener("abort", onAbort, { once: true });
    work(both).then(
      (value) => (done(), resolve(value)),
      (error: unknown) => (
        done(), reject(both.aborted ? (signal.aborted ? abortReason(signal) : abortReason(deadline.signal)) : error)
      ),
    );
  });
}

/** The model a strategy may call: `provider/model` from the global settings, else the active model. */
export function resolveModel(ctx: ExtensionContext, configured: string | undefined): ExtensionContext["model"] {
  const slash = configured ? configured.indexOf("/") : -1;
  return configured && slash > 0
    ? ctx.modelRegistry.find(configured.slice(0, slash), configured.slice(slash + 1))
    : ctx.model;
}
