// Building blocks of the generated sample: fictitious projects, file contents and tool outputs that look
// like a real TypeScript coding session. Deterministic: everything derives from a seeded Rng or a path hash.
import { hashString, Rng } from "./random.ts";

/** A fictitious repository a generated session works on. */
export interface Project {
  name: string;
  cwd: string;
  modules: string[];
  /** Source files, relative to cwd. */
  files: string[];
  /** Exported symbol names used in asks, code and errors. */
  symbols: string[];
  packageManager: "npm" | "pnpm";
}

const PROJECTS: { name: string; modules: string[]; nouns: string[] }[] = [
  {
    name: "tiny-router",
    modules: ["router", "params", "middleware", "server"],
    nouns: ["route", "segment", "handler", "params", "match"],
  },
  {
    name: "ledger-kv",
    modules: ["store", "wal", "compaction", "cli"],
    nouns: ["record", "segment", "snapshot", "index", "key"],
  },
  {
    name: "invoice-service",
    modules: ["billing", "tax", "pdf", "api", "db"],
    nouns: ["invoice", "lineItem", "customer", "tax", "currency"],
  },
  {
    name: "weatherly",
    modules: ["forecast", "units", "cache", "http"],
    nouns: ["forecast", "station", "reading", "unit", "cache"],
  },
  {
    name: "md-slides",
    modules: ["parser", "render", "theme", "watch"],
    nouns: ["slide", "token", "theme", "fragment", "deck"],
  },
  {
    name: "queue-worker",
    modules: ["queue", "retry", "metrics", "jobs"],
    nouns: ["job", "attempt", "backoff", "lease", "metric"],
  },
];

const VERBS = [
  "parse",
  "build",
  "resolve",
  "load",
  "normalize",
  "validate",
  "format",
  "merge",
  "apply",
  "create",
  "find",
  "encode",
];
const FILE_SUFFIXES = ["index", "types", "utils", "core", "errors", "config"];

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

/** Pick and flesh out a project for one session. */
export function makeProject(rng: Rng, index: number): Project {
  const base = PROJECTS[index % PROJECTS.length];
  const files: string[] = [];
  for (const module of base.modules) {
    const count = rng.int(3, 5);
    const names = rng.sample([...base.nouns, ...FILE_SUFFIXES], count);
    for (const name of names) files.push(`src/${module}/${name}.ts`);
  }
  const symbols: string[] = [];
  for (const noun of base.nouns) for (const verb of rng.sample(VERBS, 3)) symbols.push(`${verb}${capitalize(noun)}`);
  return {
    name: base.name,
    cwd: `/home/dev/src/${base.name}`,
    modules: base.modules,
    files,
    symbols,
    packageManager: rng.chance(0.5) ? "npm" : "pnpm",
  };
}

/** Test file that goes with a source file. */
export function testFileFor(file: string): string {
  return file.replace(/^src\//, "test/").replace(/\.ts$/, ".test.ts");
}

/** Deterministic TypeScript-looking content for a file; `lines` overrides the size (for long reads). */
export function fileContent(project: Project, file: string, lines?: number): string {
  const rng = new Rng(hashString(`${project.name}:${file}`));
  const target = lines ?? rng.int(40, 260);
  const out: string[] = [];
  const others = rng.sample(
    project.files.filter((f) => f !== file),
    3,
  );
  for (const other of others) {
    const rel = other.replace(/^src\//, "../").replace(/\.ts$/, ".ts");
    out.push(`import { ${rng.pick(project.symbols)} } from "${rel}";`);
  }
  out.push("");
  while (out.length < target) {
    const symbol = rng.pick(project.symbols);
    const kind = rng.int(0, 3);
    if (kind === 0) {
      out.push(`export interface ${capitalize(symbol)}Options {`);
      for (let i = rng.int(2, 6); i > 0; i--)
        out.push(
          `  ${rng.pick(["id", "name", "limit", "timeoutMs", "strict", "retries", "prefix"])}${i}?: ${rng.pick(["string", "number", "boolean"])};`,
        );
      out.push("}");
    } else {
      out.push(
        `export function ${symbol}${rng.int(1, 9)}(input: ${rng.pick(["string", "Buffer", "Record<string, unknown>", "number[]"])}, options = {}) {`,
      );
      for (let i = rng.int(3, 14); i > 0; i--) {
        out.push(
          rng.pick([
            `  const value${i} = ${rng.pick(project.symbols)}(input);`,
            `  if (!value${i}) throw new Error("${symbol}: missing ${rng.pick(["key", "segment", "header", "id"])}");`,
            `  for (const item of Object.keys(options)) total += item.length * ${i};`,
            `  // ${rng.pick(["keep insertion order", "callers rely on this", `see issue #${rng.int(10, 400)}`, "hot path: avoid allocations"])}`,
            `  result.push({ at: ${i}, value: value${i} ?? null });`,
            `  return ${rng.pick(["result", "null", `value${i}`, "{ ok: true }"])};`,
          ]),
        );
      }
      out.push("}");
    }
    out.push("");
  }
  return out.slice(0, target).join("\n");
}

/** A failing-test output with a stack-like error signature. Returns the text and the signature line. */
export function failingTestOutput(
  rng: Rng,
  project: Project,
  testFile: string,
  source: string,
): { text: string; signature: string } {
  const symbol = rng.pick(project.symbols);
  const prop = rng.pick(["id", "params", "length", "headers", "value", "key"]);
  const signature = rng.pick([
    `TypeError: Cannot read properties of undefined (reading '${prop}')`,
    `AssertionError: expected ${rng.int(2, 40)} to equal ${rng.int(41, 90)}`,
    `Error: ${symbol}: missing ${prop} for ${rng.pick(["tenant", "segment", "route", "record"])} ${rng.hex(6)}`,
    `RangeError: Invalid time value in ${symbol}`,
  ]);
  const failed = rng.int(1, 3);
  const passed = rng.int(12, 80);
  const line = rng.int(10, 240);
  const text = [
    ``,
    ` RUN  v3.2.4 ${project.cwd}`,
    ``,
    ` ❯ ${testFile} (${failed + rng.int(3, 9)} tests | ${failed} failed) ${rng.int(8, 90)}ms`,
    `   × ${symbol} handles ${rng.pick(["empty input", "nested segments", "unicode keys", "a missing tenant"])}`,
    ``,
    `⎯⎯⎯⎯⎯⎯⎯ Failed Tests ${failed} ⎯⎯⎯⎯⎯⎯⎯`,
    ``,
    ` FAIL  ${testFile} > ${symbol}`,
    signature,
    ` ❯ ${symbol}${rng.int(1, 9)} ${source}:${line}:${rng.int(3, 40)}`,
    ` ❯ ${testFile}:${rng.int(5, 120)}:${rng.int(3, 30)}`,
    `    at processTicksAndRejections (node:internal/process/task_queues:95:5)`,
    ``,
    ` Test Files  1 failed | ${rng.int(3, 14)} passed (${rng.int(15, 20)})`,
    `      Tests  ${failed} failed | ${passed} passed (${failed + passed})`,
    `   Duration  ${(rng.int(300, 4000) / 1000).toFixed(2)}s`,
    ``,
    `Command exited with code 1`,
  ].join("\n");
  return { text, signature };
}

/** A passing test run; returns the text and its "N passed" line. */
export function passingTestOutput(rng: Rng, project: Project, testFiles: string[]): { text: string; summary: string } {
  const lines = [``, ` RUN  v3.2.4 ${project.cwd}`, ``];
  let total = 0;
  for (const file of testFiles) {
    const n = rng.int(3, 24);
    total += n;
    lines.push(` ✓ ${file} (${n} tests) ${rng.int(3, 120)}ms`);
  }
  const summary = `Tests  ${total} passed (${total})`;
  lines.push(
    ``,
    ` Test Files  ${testFiles.length} passed (${testFiles.length})`,
    `      ${summary}`,
    `   Duration  ${(rng.int(200, 3000) / 1000).toFixed(2)}s`,
  );
  return { text: lines.join("\n"), summary };
}

/** A long build log (the occasional huge tool output). */
export function buildLog(rng: Rng, project: Project, lines: number): string {
  const out = [
    `> ${project.name}@1.${rng.int(0, 9)}.${rng.int(0, 20)} build`,
    `> tsc -p tsconfig.build.json && node scripts/bundle.mjs`,
    ``,
  ];
  for (let i = 0; i < lines; i++) {
    const file = rng.pick(project.files);
    out.push(
      rng.pick([
        `  dist/${file.replace(/^src\//, "").replace(/\.ts$/, ".js")}  ${rng.int(1, 90)}.${rng.int(0, 9)}kb`,
        `[bundle] transformed ${file} (${rng.int(100, 9000)} bytes) in ${rng.int(1, 40)}ms`,
        `warning: ${file}:${rng.int(1, 300)}: unused export '${rng.pick(project.symbols)}'`,
      ]),
    );
  }
  out.push(``, `build finished in ${(rng.int(900, 9000) / 1000).toFixed(2)}s`);
  return out.join("\n");
}

/** grep output over the project. */
export function grepOutput(rng: Rng, project: Project, pattern: string): string {
  const hits = rng.int(2, 14);
  const out: string[] = [];
  for (let i = 0; i < hits; i++)
    out.push(
      `${rng.pick(project.files)}:${rng.int(1, 260)}:  const x = ${pattern}(${rng.pick(["input", "options", "req", "record"])});`,
    );
  return out.join("\n");
}

/** `git status` / `git diff --stat` style output. */
export function gitStatus(rng: Rng, project: Project, modified: string[]): string {
  const out = [
    `On branch ${rng.pick(["main", `feature/${rng.pick(project.modules)}`, `fix/${rng.hex(4)}`])}`,
    `Changes not staged for commit:`,
  ];
  for (const file of modified) out.push(`\tmodified:   ${file}`);
  if (!modified.length) out.push(`nothing to commit, working tree clean`);
  return out.join("\n");
}
