#!/usr/bin/env node
// Launcher of the pi-context-ledger CLI. An installed package runs the JavaScript that `npm pack` compiled into
// dist/ (Node does not strip TypeScript types under node_modules); a checkout, which has no dist/, runs the
// TypeScript source directly. Plain JavaScript, so that it runs in both.
import { existsSync } from "node:fs";

const compiled = new URL("../dist/src/lab/bin.js", import.meta.url);
await import(existsSync(compiled) ? compiled.href : new URL("../src/lab/bin.ts", import.meta.url).href);
