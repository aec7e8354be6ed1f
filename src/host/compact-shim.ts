// Keeps Pi's own compaction out of a strategy's way, in memory only (the user's settings files are never written).
// - For preserve, Pi's automatic compaction stays off while it is active: preserve makes room at step boundaries on its own
//   reserve curve, and Pi's threshold can come first (at 128k, 111,616 before preserve's 113,162), which would start a
//   compaction preserve can only cancel ("Auto-compaction cancelled"); a length stop past the window would otherwise
//   hand the dialogue to Pi's summary. The one exception is a request the provider rejected as too long: only Pi's
//   overflow recovery can shrink a context that is all dialogue, so that case sees Pi's real setting.
// - A manual /compact reaches preserve on a short session. Pi prepares a compaction before any extension hook runs
//   and answers "Nothing to compact (session too small)" while the session is shorter than
//   `compaction.keepRecentTokens` (20,000 by default); so between agent runs, when only a manual /compact can start a
//   compaction, the setting reads 1.
// Pi 1.6 gives extensions only a copy of its settings, so the shim finds the session's SettingsManager and overrides
// `getCompactionSettings` on that one instance.
import { isContextOverflow, type AssistantMessage } from "@earendil-works/pi-ai";
import { SettingsManager, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { ManualCompactOptions, ManualCompactSwitch } from "../strategies/contract.ts";

type CompactionSettingsOf = SettingsManager["getCompactionSettings"];

export class ManualCompactShim implements ManualCompactSwitch {
  private manager: SettingsManager | undefined;
  private runOpen = false;
  private readonly pi: ExtensionAPI;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
  }

  /**
   * Install on the session's settings manager; `active` says whether the strategy acts now; `options` may also keep
   * Pi's automatic compaction off. Returns false when the manager could not be found (Pi changed): Pi's own rules
   * then apply.
   */
  install(active: () => boolean, options: ManualCompactOptions = {}): boolean {
    this.uninstall();
    this.runOpen = false;
    const manager = findSettingsManager(this.pi);
    if (!manager) return false;
    const real = SettingsManager.prototype.getCompactionSettings;
    const override: CompactionSettingsOf = (model) => {
      const settings = real.call(manager, model);
      if (!isActive(active)) return settings;
      const adjusted = { ...settings, keepRecentTokens: this.runOpen ? settings.keepRecentTokens : 1 };
      if (options.autoCompactionOff && !rejectedAsTooLong(options.autoCompactionOff.lastResponse()))
        adjusted.enabled = false;
      return adjusted;
    };
    Object.defineProperty(manager, "getCompactionSettings", { value: override, configurable: true, writable: true });
    this.manager = manager;
    return true;
  }

  /** Remove the override (session shutdown); Pi's own method applies again. */
  uninstall(): void {
    if (this.manager) delete (this.manager as { getCompactionSettings?: unknown }).getCompactionSettings;
    this.manager = undefined;
  }

  /** An agent run started (`before_agent_start`): compactions from here on are Pi's threshold or overflow ones. */
  beforeAgentStart(): void {
    this.runOpen = true;
  }

  /** The run settled: the next compaction, if any, is a manual one. */
  agentSettled(): void {
    this.runOpen = false;
  }
}

/** Whether the strategy acts now; a context Pi already retired (a disposed session) means it does not. */
function isActive(active: () => boolean): boolean {
  try {
    return active();
  } catch {
    return false;
  }
}

/** The provider refused the request as too long (Pi's own overflow classification). */
function rejectedAsTooLong(message: AssistantMessage | undefined): boolean {
  return message !== undefined && message.stopReason === "error" && isContextOverflow(message);
}

/**
 * The session's SettingsManager. `pi.getSettings()` returns a copy made by the manager's own `getSettings`, so the
 * instance is the receiver of that one synchronous call; the prototype method is restored before returning.
 */
function findSettingsManager(pi: ExtensionAPI): SettingsManager | undefined {
  const prototype = SettingsManager.prototype;
  const original = prototype.getSettings;
  let found: SettingsManager | undefined;
  prototype.getSettings = function (this: SettingsManager) {
    found = this;
    return original.call(this);
  };
  try {
    pi.getSettings();
  } catch {
    found = undefined; // not bound yet
  } finally {
    prototype.getSettings = original;
  }
  return found;
}
