// Once per run of the certification suite: pack the package as `npm publish` would, install the tarball into an
// empty prefix as `npm install` would, and `pi install` that installed copy into a template agent directory.
// Every case starts from copies of that directory, so each one loads exactly what a user's Pi would.
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { REPO, PI_PEERS, toolEnv, type CertPackage } from "./paths.ts";

declare module "vitest" {
  export interface ProvidedContext {
    cert: CertPackage;
  }
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): string {
  try {
    return execFileSync(command, args, {
      cwd,
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 120_000,
    });
  } catch (error) {
    const e = error as { stderr?: string; stdout?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), "ctx-ledger-cert-"));
  try {
    project.provide("cert", prepare(root));
  } catch (error) {
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  return () => rmSync(root, { recursive: true, force: true });
}

function prepare(root: string): CertPackage {
  const env = toolEnv();

  // `npm pack` runs `prepack`, which compiles the CLI: the tarball holds what a registry would serve.
  run("npm", ["pack", "--pack-destination", root, "--loglevel=error"], REPO, env);
  const tarball = readdirSync(root).find((f) => f.endsWith(".tgz"));
  if (!tarball) throw new Error(`npm pack left no tarball in ${root}`);

  // Installed as npm would, without dev dependencies. Pi is a peer dependency: npm would fetch it, but the suite
  // must not depend on the network, so the Pi under test (the repo's own install) is linked in its place.
  const prefix = join(root, "prefix");
  mkdirSync(prefix);
  run(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--omit=dev",
      "--legacy-peer-deps",
      "--prefer-offline",
      "--no-audit",
      "--no-fund",
      "--loglevel=error",
      join(root, tarball),
    ],
    prefix,
    env,
  );
  for (const name of PI_PEERS) {
    const target = join(prefix, "node_modules", name);
    mkdirSync(resolve(target, ".."), { recursive: true });
    if (!existsSync(target)) symlinkSync(join(REPO, "node_modules", name), target, "dir");
  }
  const packageDir = join(prefix, "node_modules", "pi-context-ledger");

  // `pi install` of the installed copy into a template agent directory; cases copy its settings.
  const templateAgentDir = join(root, "template-agent");
  const home = join(root, "home");
  mkdirSync(home);
  run(join(REPO, "node_modules/.bin/pi"), ["install", packageDir], root, {
    ...env,
    PI_CODING_AGENT_DIR: templateAgentDir,
    HOME: home,
    PI_OFFLINE: "1",
  });
  const settings = JSON.parse(readFileSync(join(templateAgentDir, "settings.json"), "utf8")) as {
    packages?: (string | { source: string })[];
  };
  // Pi stores the path relative to the settings file; cases live elsewhere, so make it absolute.
  settings.packages = (settings.packages ?? []).map((p) =>
    typeof p === "string" ? resolve(templateAgentDir, p) : { ...p, source: resolve(templateAgentDir, p.source) },
  );
  writeFileSync(join(templateAgentDir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);

  return { root, tarball: join(root, tarball), prefix, packageDir, templateAgentDir };
}
