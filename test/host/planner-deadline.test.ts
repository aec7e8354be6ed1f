// The deadline on strategy model calls: a call that never settles, even one that ignores its signal, is aborted and
// rejected at the deadline; the caller's abort wins over the deadline and passes through to the call.
import { describe, expect, it } from "vitest";
import { withDeadline } from "../../src/host/model-call.ts";
import { PlanError } from "../../src/strategies/shared/fallback.ts";

describe("model call deadline", () => {
  it("rejects with a timeout PlanError and aborts the call's signal, even when the call ignores it", async () => {
    let seen: AbortSignal | undefined;
    const never = (signal: AbortSignal) => {
      seen = signal;
      return new Promise<string>(() => undefined);
    };
    const error = await withDeadline(never, new AbortController().signal, 50).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlanError);
    expect((error as PlanError).category).toBe("timeout");
    expect((error as PlanError).message).toContain("50 ms");
    expect(seen?.aborted).toBe(true);
  });

  it("passes the caller's abort through and reports it as an abort, not a timeout", async () => {
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const pending = withDeadline(
      (signal) => {
        seen = signal;
        return new Promise<string>(() => undefined);
      },
      controller.signal,
      60_000,
    ).catch((e: unknown) => e);
    controller.abort(new Error("user aborted"));
    const error = await pending;
    expect(error).not.toBeInstanceOf(PlanError);
    expect(String(error)).toContain("user aborted");
    expect(seen?.aborted).toBe(true);
  });

  it("returns the answer of a call that settles in time", async () => {
    await expect(withDeadline(async () => "plan", new AbortController().signal, 60_000)).resolves.toBe("plan");
  });
});
