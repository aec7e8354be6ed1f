// How the architecture tests read imports: a small scanner finds each module specifier (one in a comment, a string or
// a template is not an import), Node's own type stripping tells which remain at run time, and Tarjan's algorithm
// finds the cycles.
import { stripTypeScriptTypes } from "node:module";
import { dirname, relative, resolve } from "node:path";

/** One import of a module: where it points (repository-relative) and whether it survives type erasure. */
export interface Edge {
  from: string;
  to: string;
  typeOnly: boolean;
}

/** A token of TypeScript source, as far as finding imports needs: words, string literals and punctuation. */
interface Token {
  kind: "word" | "string" | "punct";
  text: string;
  at: number;
}

const WORD = /[A-Za-z0-9_$]/;
/** After these a `/` starts a regular expression rather than a division. */
const BEFORE_REGEX = new Set([
  "(",
  ",",
  "=",
  ":",
  "[",
  "!",
  "&",
  "|",
  "?",
  "{",
  "}",
  ";",
  "+",
  "-",
  "*",
  "%",
  "<",
  ">",
  "~",
  "^",
]);
const KEYWORDS_BEFORE_REGEX = new Set([
  "return",
  "typeof",
  "case",
  "do",
  "else",
  "in",
  "of",
  "new",
  "delete",
  "void",
  "throw",
  "yield",
  "await",
]);

/**
 * Words, strings and punctuation of `source`, comments and template text and regular expressions skipped (a template's
 * `${…}` is scanned as code). Linear in the source.
 */
export function tokens(source: string): Token[] {
  const out: Token[] = [];
  // Brace depth at which each open template resumes.
  const templates: number[] = [];
  let depth = 0;
  let i = 0;
  const template = () => {
    // From just inside a template's text to its end or to a `${`.
    while (i < source.length && source[i] !== "`") {
      if (source[i] === "\\") i += 2;
      else if (source[i] === "$" && source[i + 1] === "{") {
        i += 2;
        templates.push(depth++);
        return;
      } else i++;
    }
    i++;
  };
  while (i < source.length) {
    const c = source[i];
    if (/\s/.test(c)) i++;
    else if (c === "/" && source[i + 1] === "/") while (i < source.length && source[i] !== "\n") i++;
    else if (c === "/" && source[i + 1] === "*") {
      const end = source.indexOf("*/", i + 2);
      i = end < 0 ? source.length : end + 2;
    } else if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < source.length && source[j] !== c && source[j] !== "\n") j += source[j] === "\\" ? 2 : 1;
      out.push({ kind: "string", text: source.slice(i + 1, j), at: i });
      i = j + 1;
    } else if (c === "`") {
      i++;
      template();
      out.push({ kind: "punct", text: "`", at: i });
    } else if (c === "}" && templates.length > 0 && templates[templates.length - 1] === depth - 1) {
      templates.pop();
      depth--;
      i++;
      template();
    } else if (c === "/" && regexMayStart(out[out.length - 1])) {
      let j = i + 1;
      let inClass = false;
      while (j < source.length && source[j] !== "\n" && (inClass || source[j] !== "/")) {
        if (source[j] === "\\") j++;
        else if (source[j] === "[") inClass = true;
        else if (source[j] === "]") inClass = false;
        j++;
      }
      i = j + 1;
      while (i < source.length && WORD.test(source[i])) i++;
      out.push({ kind: "punct", text: "/re/", at: i });
    } else if (WORD.test(c)) {
      let j = i;
      while (j < source.length && WORD.test(source[j])) j++;
      out.push({ kind: "word", text: source.slice(i, j), at: i });
      i = j;
    } else {
      if (c === "{") depth++;
      else if (c === "}") depth--;
      out.push({ kind: "punct", text: c, at: i });
      i++;
    }
  }
  return out;
}

function regexMayStart(previous: Token | undefined): boolean {
  if (previous === undefined) return true;
  if (previous.kind === "punct") return BEFORE_REGEX.has(previous.text);
  return previous.kind === "word" && KEYWORDS_BEFORE_REGEX.has(previous.text);
}

/** The module specifiers `source` imports or re-exports (declarations, `import "x"`, `import("x")`), by offset. */
export function specifiers(source: string): Array<{ text: string; at: number }> {
  const list = tokens(source);
  const out: Array<{ text: string; at: number }> = [];
  for (let k = 0; k < list.length; k++) {
    const t = list[k];
    if (t.kind !== "word" || (t.text !== "import" && t.text !== "export") || list[k - 1]?.text === ".") continue;
    const next = list[k + 1];
    if (next === undefined) continue;
    if (t.text === "import" && next.kind === "string") out.push(next);
    else if (t.text === "import" && next.text === "(") {
      if (list[k + 2]?.kind === "string") out.push(list[k + 2]);
    } else if (t.text === "import" || next.text === "{" || next.text === "*" || next.text === "type") {
      // A declaration or a re-export: its specifier follows `from`, before the statement ends.
      for (let m = k + 1; m < list.length; m++) {
        const u = list[m];
        if (u.text === ";" || ((u.text === "import" || u.text === "export") && u.kind === "word")) break;
        if (u.kind === "word" && u.text === "from" && list[m + 1]?.kind === "string") {
          out.push(list[m + 1]);
          break;
        }
      }
    }
  }
  return out;
}

/**
 * Node's own type erasure (the package runs by type stripping), so "at run time" means what Node loads. Its one-time
 * experimental warning is dropped here and only here.
 */
function erased(source: string): string {
  const emit = process.emitWarning;
  process.emitWarning = (() => {}) as typeof process.emitWarning;
  try {
    return stripTypeScriptTypes(source);
  } finally {
    process.emitWarning = emit;
  }
}

/**
 * Every relative import of `source` (a file at path `from` under `root`), as paths relative to `root`, and whether
 * type erasure removes it.
 */
export function importsOf(root: string, from: string, source: string): Edge[] {
  const runtime = new Set(specifiers(erased(source)).map((s) => s.at));
  return specifiers(source)
    .filter((s) => s.text.startsWith("."))
    .map((s) => ({
      from,
      to: relative(root, resolve(root, dirname(from), s.text)),
      typeOnly: !runtime.has(s.at),
    }));
}

/** The strongly connected components with more than one file, or a file importing itself (Tarjan's algorithm). */
export function cycles(edges: readonly Edge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) {
    if (!next.has(e.from)) next.set(e.from, []);
    if (!next.has(e.to)) next.set(e.to, []);
    next.get(e.from)?.push(e.to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  // Iterative, so a long import chain cannot overflow the call stack.
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; i: number }> = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1];
      const succ = next.get(top.node) ?? [];
      if (top.i < succ.length) {
        const w = succ[top.i++];
        if (!index.has(w)) {
          index.set(w, counter);
          low.set(w, counter++);
          stack.push(w);
          onStack.add(w);
          work.push({ node: w, i: 0 });
        } else if (onStack.has(w)) {
          low.set(top.node, Math.min(low.get(top.node) ?? 0, index.get(w) ?? 0));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent) ?? 0, low.get(top.node) ?? 0));
      }
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let w: string | undefined;
        do {
          w = stack.pop();
          if (w === undefined) break;
          onStack.delete(w);
          component.push(w);
        } while (w !== top.node);
        const selfLoop = component.length === 1 && succ.includes(top.node);
        if (component.length > 1 || selfLoop) found.push(component.sort());
      }
    }
  }
  return found;
}
