// Lets a manual /compact reach the preserve strategy on a short session. Pi prepares a compaction before any
// extension hook runs and answers "Nothing to compact (session too small)" while the session is shorter than
// `compaction.keepRecentTokens` (20,000 by default), yet preserve checkpoints tool traffic whatever the session's
// length. Pi 1.6 gives extensions only a copy of its settings, so the shim finds the session's SettingsManager and
// makes it report keepRecentTokens 1 while preserve is active and no agent run is open: between runs only a manual
// /compact starts a compaction, while threshold and overflow compactions (inside a run) see the real value.
import { SettingsManager, type ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { ManualCompactSwitch } from "../strategies/contract.ts";

type CompactionSettingsOf = SettingsManager["getCompactionSettings"];

export class ManualCompactShim implements ManualCompactSwitch {
  private manager: SettingsManager | undefined;
  private runOpen = false;
  private readonly pi: ExtensionAPI;

  constructor(pi: ExtensionAPI) {
    this.pi = pi;
  }

  /**
   * Install on the session's settings manager; `active` says whether preserve acts now. Returns false when the
   * manager could not be found (Pi changed): manual /compact then keeps Pi's own rule.
   */
  install(active: () => boolean): boolean {
    this.uninstall();
    this.runOpen = false;
    const manager = findSettingsManager(this.pi);
    if (!manager) return false;
    const real = SettingsManager.prototype.getCompactionSettings;
    const lowered: CompactionSettingsOf = (model) => {
      const settings = real.call(manager, model);
      return active() && !this.runOpen ? { ...settings, keepRecentTokens: 1 } : settings;
    };
    Object.defineProperty(manager, "getCompactionSettings", { value: lowered, configurable: true, writable: true });
    this.manager = manager;
    return true;
  }

  /** Remove the override (session shutdown); Pi's own method applies again. */
  uninstall(): void {
    if (this.manager) delete (this.manager as { getCompactionSettings?: unknown }).getCompactionSettings;
    this.manager = undefined;
  }

  /** An agent run started (`before_agent_start`): compactions from here on are Pi's threshold or overflow ones. */
  runStarted(): void {
    this.runOpen = true;
  }

  /** The run settled: the next compaction, if any, is a manual one. */
  runSettled(): void {
    this.runOpen = false;
  }
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
