// Where the certification suite finds things, shared by its global setup and its cases.
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
/** The repo's tools: Node 22, `pi`, `tsc`. */
export const BIN = join(REPO, "node_modules/.bin");
export const PI = join(BIN, "pi");
/** The test-only provider extension every case loads with `-e`. */
export const PROVIDER_EXTENSION = join(REPO, "test/e2e/fixtures/scripted-provider.ts");
/** Pi's packages, which the package declares as peer dependencies. */
export const PI_PEERS = [
  "@earendil-works/pi-coding-agent",
  "@earendil-works/pi-ai",
  "@earendil-works/pi-agent-core",
  "@earendil-works/pi-tui",
  "typebox",
] as const;

/** What the global setup built, shared with every case through vitest's `provide`/`inject`. */
export interface CertPackage {
  /** Temp directory holding everything below; removed after the run. */
  root: string;
  tarball: string;
  /** The npm prefix the tarball was installed into. */
  prefix: string;
  /** `<prefix>/node_modules/pi-context-ledger`. */
  packageDir: string;
  /** A Pi agent directory where `pi install <packageDir>` ran. */
  templateAgentDir: string;
}

/** npm settings a nested npm keeps: where its cache and registry are. */
const KEEP_NPM = new Set([
  "npm_config_cache",
  "npm_config_registry",
  "npm_config_userconfig",
  "npm_config_globalconfig",
]);

/**
 * Environment for child tools: Node 22 first on PATH, and none of the other `npm_*` variables an enclosing
 * `npm test` sets (they describe the repo's package and would steer a nested npm towards it).
 */
export function toolEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith("npm_") || KEEP_NPM.has(key.toLowerCase())) env[key] = value;
  return { ...env, PATH: `${BIN}:${process.env.PATH ?? ""}`, ...extra };
}
