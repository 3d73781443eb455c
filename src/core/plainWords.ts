import { clip } from './canonical';
import { COMMAND_KEYS, PATH_KEYS } from './intent';
import { parseJson } from './json';

/**
 * Calls said the way a person would say them: `bash: npm test`, `apply_code_edit src/a.ts:
 * search "foo()"`, `grep "TODO" in src` — never argument JSON cut mid-token. Pure.
 */

// The argument names that hold a shell command and the file or folder a call works on: intent.ts's.
/** Argument names that hold the text an edit looks for. */
const SEARCH_KEYS = ['search', 'old_string', 'old_str', 'oldString', 'oldText', 'find', 'search_text'];
/** Argument names that hold what a search or fetch looks for. */
const QUERY_KEYS = ['query', 'pattern', 'regex', 'q', 'url', 'prompt', 'description', 'task'];

const MAX = 100;

function text(v: unknown): string | undefined {
  if (typeof v === 'string') return v.trim() === '' ? undefined : v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v.join(' ');
  return undefined;
}

function pick(args: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const k of keys) {
    const t = text(args[k]);
    if (t !== undefined) return t;
  }
  return undefined;
}

function quote(s: string, max: number): string {
  return `"${clip(s, max)}"`;
}

/**
 * One call in plain words. `args`: the call's arguments, as an object or as (canonical) JSON
 * text; anything else is said as it is, clipped.
 */
export function sayCall(tool: string, args: unknown): string {
  let a = args;
  if (typeof a === 'string') {
    if (a === '' || a === '{}') return tool;
    const parsed = parseJson(a);
    if (!parsed.ok) return `${tool} ${clip(a, MAX)}`;
    a = parsed.value;
  }
  if (a === null || typeof a !== 'object' || Array.isArray(a)) {
    const t = text(a);
    return t === undefined ? tool : `${tool} ${clip(t, MAX)}`;
  }
  const o = a as Record<string, unknown>;
  const command = pick(o, COMMAND_KEYS);
  // A tool named after its command (`submit`, `python`) is said once.
  if (command !== undefined) return clip(command === tool || command.startsWith(`${tool} `) ? command : `${tool}: ${command}`, MAX);
  const where = pick(o, PATH_KEYS);
  const search = pick(o, SEARCH_KEYS);
  const query = pick(o, QUERY_KEYS);
  if (where !== undefined && search !== undefined) return `${tool} ${clip(where, 60)}: search ${quote(search, 40)}`;
  if (where !== undefined && query !== undefined) return `${tool} ${quote(query, 50)} in ${clip(where, 50)}`;
  if (where !== undefined) return `${tool} ${clip(where, MAX - tool.length)}`;
  if (query !== undefined) return `${tool} ${quote(query, MAX - tool.length)}`;
  // Otherwise the first few simple values, by name: `set_mode mode=plan`.
  const parts: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    const t = text(v);
    if (t === undefined) continue;
    parts.push(`${k}=${clip(t, 40)}`);
    if (parts.length === 3) break;
  }
  return parts.length === 0 ? tool : clip(`${tool} ${parts.join(' ')}`, MAX);
}

/** A count in words: `once`, `twice`, `3 times`. */
export function times(n: number): string {
  return n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`;
}
