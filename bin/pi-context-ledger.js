#!/usr/bin/env node
// Launcher of the pi-context-ledger CLI. An installed package runs the JavaScript that `npm pack` compiled into
// dist/ (Node does not strip TypeScript types under node_modules); a checkout, which has no dist/, runs the
// TypeScript source directly. Plain JavaScript, so that it runs in both.
//
// It is also the one file an older Node.js still runs: the TypeScript source (an unknown ".ts" extension) and Pi
// (missing APIs) would fail with a stack. So it checks the version first, against package.json's `engines`.
import { existsSync, readFileSync } from "node:fs";

/** The oldest Node.js the package states it runs on, as [major, minor], or undefined when it states none readable. */
function minimumNode() {
  const range = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")).engines?.node;
  const match = /^>=\s*(\d+)\.(\d+)/.exec(typeof range === "string" ? range : "");
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

const minimum = minimumNode();
const [major, minor] = process.versions.node.split(".").map(Number);
if (minimum && (major < minimum[0] || (major === minimum[0] && minor < minimum[1]))) {
  process.stderr.write(
    `pi-context-ledger: needs Node.js ${minimum[0]}.${minimum[1]} or newer, as Pi does (this is Node.js ${process.versions.node})\n`,
  );
  process.exitCode = 1;
} else {
  const compiled = new URL("../dist/src/lab/bin.js", import.meta.url);
  await import(existsSync(compiled) ? compiled.href : new URL("../src/lab/bin.ts", import.meta.url).href);
}
