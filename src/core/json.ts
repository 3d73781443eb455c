import type * as SafeStableStringify from 'safe-stable-stringify';
import { jsonErrorLocation } from './jsonPositions';

/**
 * JSON from outside (agents' logs, histories, registries, settings, config files) with a depth
 * limit. `JSON.parse` itself copes with any nesting, but everything after it that recurses
 * (stringify, structuredClone, zod, deep-equal, the canonicalizer) overflows the stack on a value
 * nested a few thousand levels deep: such a value is refused at the door instead.
 */

/**
 * How deeply a value from outside may nest. Real agents' records nest a dozen levels at most; 64
 * leaves room for tool arguments of any honest shape and stays far from any stack limit.
 */
export const MAX_JSON_DEPTH = 64;

/** The byte order mark some editors put at the start of a file: not part of the JSON. */
export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

export function tooDeepReason(maxDepth: number = MAX_JSON_DEPTH): string {
  return `nested deeper than ${maxDepth} levels`;
}

/**
 * Whether a parsed value nests deeper than `maxDepth` (a scalar is depth 0, `{}` and `[]` depth 1).
 * It recurses at most `maxDepth` levels, so a depth limit up to RECURSION_LIMIT is walked without
 * allocating (it runs on every line read); a larger one is walked with a stack of its own, which
 * cannot overflow. An infinite `maxDepth` checks nothing.
 */
export function exceedsDepth(value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean {
  if (typeof value !== 'object' || value === null || maxDepth === Number.POSITIVE_INFINITY) return false;
  return maxDepth <= RECURSION_LIMIT ? deeperThan(value, maxDepth) : deeperThanIterative(value, maxDepth);
}

const RECURSION_LIMIT = 1000;

/** Whether an object nests more than `levels` levels, itself included. */
function deeperThan(node: object, levels: number): boolean {
  if (levels <= 0) return true;
  if (Array.isArray(node)) {
    for (let i = 0; i < node.length; i++) {
      const child: unknown = node[i];
      if (typeof child === 'object' && child !== null && deeperThan(child, levels - 1)) return true;
    }
    return false;
  }
  for (const key in node) {
    const child = (node as Record<string, unknown>)[key];
    if (typeof child === 'object' && child !== null && deeperThan(child, levels - 1)) return true;
  }
  return false;
}

function deeperThanIterative(value: object, maxDepth: number): boolean {
  const stack: Array<[object, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [object, number];
    if (depth > maxDepth) return true;
    const children: unknown[] = Array.isArray(node) ? node : Object.values(node);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
  return false;
}

export type JsonParse =
  | { ok: true; value: unknown }
  /** `at` is where the text stops being JSON, when the parser said (line 1 counted without a BOM). */
  | { ok: false; tooDeep: boolean; error: string; at?: { line: number; column: number } };

/** Where JSON text stops being JSON, in words: `line L, column C`. */
export function jsonWhere(at: { readonly line: number; readonly column: number }): string {
  return `line ${at.line}, column ${at.column}`;
}

/**
 * Parses JSON text from outside: a leading BOM is dropped, and a value nested deeper than
 * `maxDepth` is refused like text that is not JSON (`tooDeep` tells which).
 */
export function parseJson(text: string, maxDepth: number = MAX_JSON_DEPTH): JsonParse {
  const body = stripBom(text);
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    const at = jsonErrorLocation(body, err as Error);
    return { ok: false, tooDeep: false, error: (err as Error).message, ...(at ? { at } : {}) };
  }
  if (exceedsDepth(value, maxDepth)) return { ok: false, tooDeep: true, error: tooDeepReason(maxDepth) };
  return { ok: true, value };
}

/**
 * `JSON.stringify` for values from outside: the same text for anything within the depth limit;
 * deeper objects print as `[Object]` and arrays as `[Array]` instead of overflowing the stack.
 * Key order is kept as it is (the canonicalizer sorts, this does not).
 */
export const stringifyJson = lazyStableStringify({ circularValue: '[Circular]', bigint: true, deterministic: false, maximumDepth: MAX_JSON_DEPTH });

type StableOptions = Parameters<typeof SafeStableStringify.configure>[0];

/**
 * safe-stable-stringify configured with `options`, loaded and configured the first time a value
 * needs it: the hook, which starts for every tool call, never does (the values it handles are
 * JSON.parse's, within the depth limit), and configuring it when the module loaded was part of the
 * hook's start.
 */
export function lazyStableStringify(options: StableOptions): (value: unknown) => string | undefined {
  let configured: ((value: unknown) => string | undefined) | undefined;
  return (value) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    configured ??= (require('safe-stable-stringify') as typeof SafeStableStringify).configure(options);
    return configured(value);
  };
}

/**
 * The length of a value's JSON text, without writing it (`JSON.stringify`'s, for plain data whose
 * strings need no escapes; each escape is a character or five more): what the OTLP receiver counts
 * a session's events as, whether or not it writes them.
 */
export function jsonLength(v: unknown, depth = 0): number {
  // Deeper than a value from outside may nest (parseJson refuses it): written out.
  if (depth > MAX_JSON_DEPTH) return JSON.stringify(v)?.length ?? 0;
  switch (typeof v) {
    case 'string':
      return v.length + 2;
    case 'number':
      return Number.isFinite(v) ? String(v).length : 4;
    case 'boolean':
      return v ? 4 : 5;
    case 'object': {
      if (v === null) return 4;
      if (Array.isArray(v)) {
        let n = 2 + Math.max(0, v.length - 1);
        for (const x of v) n += x === undefined ? 4 : jsonLength(x, depth + 1);
        return n;
      }
      let n = 2;
      let first = true;
      for (const key in v) {
        const x = (v as Record<string, unknown>)[key];
        if (x === undefined || typeof x === 'function') continue;
        n += (first ? 0 : 1) + key.length + 3 + jsonLength(x, depth + 1);
        first = false;
      }
      return n;
    }
    default:
      return 0;
  }
}
