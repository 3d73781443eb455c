/*
 * Where in the project a loop is about: the file (and line) its failing call names. Pure: text in,
 * places out; whether a place is in the workspace is for the caller to tell.
 *
 * The shapes are the compilers' and tools' own:
 * - TypeScript's `tsc` (non-pretty): `src/range.ts(3,10): error TS2304: …`
 *   (microsoft/TypeScript src/compiler/program.ts, formatDiagnostic: `${file}(${line},${character}): `);
 * - GCC, Clang, ESLint's unix formatter, Node's stack traces, Python's pytest short form, Rust's
 *   `--> src/main.rs:3:10`, Go: `path:line[:column]`;
 * - Python tracebacks: `File "app/x.py", line 12`;
 * - a call's own target: an edit's `file_path` / `path` argument.
 */

export interface SourcePlace {
  /** As written: relative, or absolute. */
  readonly path: string;
  /** 1-based, when the text says. */
  readonly line?: number;
  readonly column?: number;
}

// A path: no spaces or quotes, a name with an extension of letters and digits.
const PATH = String.raw`((?:[A-Za-z]:)?[\w@.~/\\-]*[\w-]\.[A-Za-z][\w]{0,7})`;
const TSC = new RegExp(String.raw`${PATH}\((\d+),(\d+)\)`, 'g');
const COLON = new RegExp(String.raw`${PATH}:(\d+)(?::(\d+))?`, 'g');
const PY = /File "([^"]+)", line (\d+)/g;
const ARG = /\b(?:file_path|filePath|path|file|target_file|absolute_path): (\S+)/g;
const BARE = new RegExp(String.raw`(?:^|[\s'"\x60(])${PATH}(?=$|[\s'"\x60):,])`, 'g');

/** The places a text names, the most precise first (with a line), then a call's target, then bare paths. Each path once. */
export function sourcePlaces(text: string): SourcePlace[] {
  const out: SourcePlace[] = [];
  const seen = new Set<string>();
  const add = (path: string | undefined, line?: string, column?: string) => {
    if (path === undefined || path.includes('://') || /^\d/.test(path) || seen.has(path)) return;
    // A version or a host name ("v1.2", "example.com") has no folder and no known source extension: left to the existence check.
    seen.add(path);
    out.push({ path, ...(line !== undefined ? { line: Number(line) } : {}), ...(column !== undefined ? { column: Number(column) } : {}) });
  };
  for (const m of text.matchAll(TSC)) add(m[1], m[2], m[3]);
  for (const m of text.matchAll(PY)) add(m[1], m[2]);
  for (const m of text.matchAll(COLON)) add(m[1], m[2], m[3]);
  for (const m of text.matchAll(ARG)) add(m[1]);
  for (const m of text.matchAll(BARE)) add(m[1]);
  return out;
}

/** The keys a call names its target file by, across the agents' tools. */
const TARGET_KEYS = new Set(['file_path', 'filePath', 'path', 'file', 'target_file', 'absolute_path']);

/**
 * A log line's words, for `sourcePlaces`: a JSON line's strings, one a line (escapes undone, so an
 * error's `\n` is a line break, not part of a path), a target file as `file_path: …`; other text as it is.
 */
export function lineText(line: string): string {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return line;
  }
  const out: string[] = [];
  let budget = 2000;
  const walk = (v: unknown, key?: string): void => {
    if (budget-- <= 0) return;
    if (typeof v === 'string') out.push(key !== undefined && TARGET_KEYS.has(key) ? `${key}: ${v}` : v);
    else if (Array.isArray(v)) for (const x of v) walk(x);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  walk(value);
  return out.join('\n');
}
