import { lazyStableStringify, MAX_JSON_DEPTH } from './json';
import { maskSecrets } from './secrets';

/** Keys that differ between two otherwise identical calls: ids, clocks, pids, durations, progress. */
export const DEFAULT_VOLATILE_KEYS: readonly string[] = [
  'id',
  'call_id',
  'tool_use_id',
  'tool_call_id',
  'request_id',
  'requestId',
  'timestamp',
  'ts',
  'time',
  'created_at',
  'updated_at',
  'pid',
  'duration',
  'duration_ms',
  'elapsed',
  'elapsed_ms',
  'task_progress',
  'progress',
];

/**
 * Arguments that the model writes as commentary, per tool: they differ on every retry of the same
 * call (the `description` of a shell tool), so they are no part of what the call does. The
 * agents' own shell and edit tools, by the names their logs give them.
 */
export const DEFAULT_VOLATILE_ARGS: Readonly<Record<string, readonly string[]>> = {
  // the shell tool's `description` (not the subagent tool's: it is a required parameter there, and
  // a call retried with it added is the fix of a failed call, not its repeat)
  Bash: ['description'],
  run_shell_command: ['description'],
  bash: ['description'],
  powershell: ['description'],
  // `explanation` of the terminal and edit tools
  run_in_terminal: ['explanation'],
  replace_string_in_file: ['explanation'],
  multi_replace_string_in_file: ['explanation'],
  insert_edit_into_file: ['explanation'],
  // `justification` of a shell call asking for more permissions
  shell: ['justification'],
  shell_command: ['justification'],
};

const NOT_PLAIN: unique symbol = Symbol('not plain JSON');
/** What `Canonicalizer.keys` holds for a volatile key (no key in lower case has an upper-case letter). */
const VOLATILE = 'VOLATILE';
const KEYS_REMEMBERED = 4096;

const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/;

/** A string as `JSON.stringify` writes it: quoted as it is, unless a character needs escaping. */
function quote(text: string): string {
  return text.length < 256 && !NEEDS_ESCAPE.test(text) ? `"${text}"` : JSON.stringify(text);
}

/** Keys in code-unit order, as `stringify` sorts them: an insertion sort, for the few keys of most objects. */
function sortKeys(keys: string[]): string[] {
  if (keys.length > 32) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

// Depth-limited: arguments come from agents; the readers refuse deeper values, this is the backstop.
// Configured the first time the general path writes a value (the plain path writes JSON.parse's).
const stringify = lazyStableStringify({ deterministic: true, circularValue: '[Circular]', bigint: true, maximumDepth: MAX_JSON_DEPTH });

/**
 * Canonical text of a JSON value: keys sorted at every depth, array order kept,
 * volatile keys (compared case-insensitively) dropped wherever they appear.
 */
export class Canonicalizer {
  private readonly volatile: ReadonlySet<string>;
  /** Keys seen, with their lower case, or VOLATILE. */
  private readonly keys = new Map<string, string>();
  private readonly hash53 = new Hash53();
  private readonly textOut = new TextPieces();
  private readonly volatileArgs: ReadonlyMap<string, ReadonlySet<string>>;

  /** `volatileArgs`: per tool name (`*` for every tool), top-level argument keys left out of its calls. */
  constructor(volatileKeys: readonly string[] = DEFAULT_VOLATILE_KEYS, volatileArgs: Readonly<Record<string, readonly string[]>> = DEFAULT_VOLATILE_ARGS) {
    this.volatile = new Set(volatileKeys.map((k) => k.toLowerCase()));
    this.volatileArgs = new Map(Object.entries(volatileArgs ?? {}).map(([tool, keys]) => [tool, new Set((Array.isArray(keys) ? keys : []).map((k) => String(k).toLowerCase()))]));
  }

  /** Canonical text of a call's arguments: `text`, without the tool's volatile arguments. */
  args(tool: string, args: unknown): string {
    const own = this.volatileArgs.get(tool);
    const all = this.volatileArgs.get('*');
    const plain = this.plainText(args, 1, own, all);
    if (plain !== NOT_PLAIN) return plain ?? '';
    if ((own === undefined && all === undefined) || typeof args !== 'object' || args === null || Array.isArray(args)) return this.text(args);
    let copy: Record<string, unknown> | undefined;
    for (const key of Object.keys(args)) {
      const k = key.toLowerCase();
      if (own?.has(k) || all?.has(k)) delete (copy ??= { ...(args as Record<string, unknown>) })[key];
    }
    return this.text(copy ?? args);
  }

  /**
   * `hash53(callSignature(tool, this.args(tool, args)))`, computed as the text would be written but
   * without writing it: the engine hashes every call, and needs the text only to confirm that two
   * calls with equal hashes are the same, or to name a call in a finding.
   */
  signatureHash(tool: string, args: unknown): number {
    const h = this.hash53;
    h.start();
    h.add(tool);
    h.add('\u0000');
    if (this.write(args, 1, h, this.volatileArgs.get(tool), this.volatileArgs.get('*')) !== NOT_PLAIN) return h.end();
    // Not plain: the text written by the general path, hashed.
    const text = this.args(tool, args);
    h.start();
    h.add(tool);
    h.add('\u0000');
    h.add(text);
    return h.end();
  }

  /**
   * Whether every string of the call's signature (its keys and string values, at any depth, the
   * volatile ones left out) occurs in `text` as `JSON.stringify` writes it. When one does not, no
   * line of `text` written by `JSON.stringify` holds a call with this signature, whatever the
   * order of its keys or its volatile values: the signature's strings are written into such a
   * line as they are here. True where it cannot tell (a value only the general path writes).
   */
  stringsOccurIn(tool: string, args: unknown, text: string): boolean {
    const found = new Occurrences(text);
    const written = this.write(args, 1, found, this.volatileArgs.get(tool), this.volatileArgs.get('*'));
    return written === NOT_PLAIN || !found.missing;
  }

  /** `hash53(this.text(value))`, without writing the text where `write` can feed the hash. */
  hash(value: unknown): number {
    const h = this.hash53;
    h.start();
    return this.write(value, 1, h) !== NOT_PLAIN ? h.end() : hash53(this.text(value));
  }

  text(value: unknown): string {
    if (value === undefined) return '';
    const plain = this.plainText(value, 1);
    if (plain !== NOT_PLAIN) return plain ?? '';
    return stringify(this.strip(value)) ?? '';
  }

  /** `write` to text: the canonical text of a plain value, NOT_PLAIN, or undefined (nothing written). */
  private plainText(value: unknown, level: number, skipOwn?: ReadonlySet<string>, skipAll?: ReadonlySet<string>): string | undefined | typeof NOT_PLAIN {
    const out = this.textOut;
    out.start();
    const written = this.write(value, level, out, skipOwn, skipAll);
    return written === true ? out.text : written;
  }

  /**
   * `text` in one pass for what `JSON.parse` returns (plain objects, arrays, strings, numbers,
   * booleans, null), without copying, written piece by piece to `out` (a text, or a hash that
   * never joins the pieces): the same text as `strip` then `stringify` (keys sorted by code unit,
   * strings as `JSON.stringify` writes them, non-finite numbers as null, undefined left out of
   * objects and null in arrays). NOT_PLAIN for anything else, and for a nesting past the depth
   * limit: the general path writes those (what was written is then to be thrown away); undefined
   * where nothing is written. `skipOwn`/`skipAll`: argument keys left out at the top. `level`: 1
   * for the value itself.
   */
  private write(value: unknown, level: number, out: Pieces, skipOwn?: ReadonlySet<string>, skipAll?: ReadonlySet<string>): true | undefined | typeof NOT_PLAIN {
    switch (typeof value) {
      case 'string':
        out.addQuoted(value);
        return true;
      case 'number':
        out.add(Number.isFinite(value) ? String(value) : 'null');
        return true;
      case 'boolean':
        out.add(value ? 'true' : 'false');
        return true;
      case 'undefined':
        return undefined;
      case 'object':
        break;
      default:
        return NOT_PLAIN;
    }
    if (value === null) {
      out.add('null');
      return true;
    }
    if (Array.isArray(value)) {
      if (value.length === 0) {
        out.add('[]');
        return true;
      }
      if (level > MAX_JSON_DEPTH) return NOT_PLAIN;
      out.add('[');
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out.add(',');
        const item = this.write(value[i], level + 1, out);
        if (item === NOT_PLAIN) return NOT_PLAIN;
        if (item === undefined) out.add('null');
      }
      out.add(']');
      return true;
    }
    if (Object.getPrototypeOf(value) !== Object.prototype || typeof (value as { toJSON?: unknown }).toJSON === 'function') return NOT_PLAIN;
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    // The usual arguments: flat, keys already in order, none left out: written whole (`addFlat`:
    // the text by `JSON.stringify`, natively; the hash fed piece by piece), as the general path
    // would write them (the property tests in fastPaths.test.ts hold both to it).
    if (level <= MAX_JSON_DEPTH && this.flatAndInOrder(obj, keys, skipOwn, skipAll)) {
      out.addFlat(obj, keys);
      return true;
    }
    sortKeys(keys);
    out.add('{');
    let first = true;
    for (const key of keys) {
      const k = this.lowerCase(key);
      if (k === undefined || skipOwn?.has(k) || skipAll?.has(k)) continue;
      // Past the depth limit the general path writes a marker in place of a non-empty object.
      if (level > MAX_JSON_DEPTH) return NOT_PLAIN;
      const item = obj[key];
      // Left out, as `JSON.stringify` leaves it out (a function or a symbol is refused below).
      if (item === undefined) continue;
      if (!first) out.add(',');
      first = false;
      out.addQuoted(key);
      out.add(':');
      if (this.write(item, level + 1, out) === NOT_PLAIN) return NOT_PLAIN;
    }
    out.add('}');
    return true;
  }

  /**
   * Whether an object's keys are in code-unit order as they are enumerated (the order
   * `JSON.stringify` writes them in), none of them is left out, and every value is a string, a
   * finite number, a boolean or null.
   */
  private flatAndInOrder(obj: Record<string, unknown>, keys: readonly string[], skipOwn?: ReadonlySet<string>, skipAll?: ReadonlySet<string>): boolean {
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (i > 0 && !((keys[i - 1] as string) < key)) return false;
      const lower = this.lowerCase(key);
      if (lower === undefined || skipOwn?.has(lower) || skipAll?.has(lower)) return false;
      const v = obj[key];
      switch (typeof v) {
        case 'string':
        case 'boolean':
          break;
        case 'number':
          if (!Number.isFinite(v)) return false;
          break;
        case 'object':
          if (v !== null) return false;
          break;
        default:
          return false;
      }
    }
    return true;
  }

  /**
   * A key in lower case, undefined when it is a volatile key: remembered, since the same few keys
   * come back in every call (`JSON.parse` gives them as the same strings).
   */
  private lowerCase(key: string): string | undefined {
    const known = this.keys.get(key);
    if (known !== undefined) return known === VOLATILE ? undefined : known;
    const lower = key.toLowerCase();
    if (this.keys.size >= KEYS_REMEMBERED) this.keys.clear();
    this.keys.set(key, this.volatile.has(lower) ? VOLATILE : lower);
    return this.volatile.has(lower) ? undefined : lower;
  }

  /** The value without volatile keys; the value itself (no copy) when it has none, the usual case. */
  private strip(value: unknown, depth = 0): unknown {
    if (typeof value !== 'object' || value === null || depth > MAX_JSON_DEPTH) return value;
    if (Array.isArray(value)) {
      let copy: unknown[] | undefined;
      for (let i = 0; i < value.length; i++) {
        const v = value[i] as unknown;
        const s = this.strip(v, depth + 1);
        if (s !== v) (copy ??= value.slice())[i] = s;
      }
      return copy ?? value;
    }
    let copy: Record<string, unknown> | undefined;
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      if (this.volatile.has(key.toLowerCase())) {
        copy ??= { ...obj };
        delete copy[key];
        continue;
      }
      const v = obj[key];
      const s = this.strip(v, depth + 1);
      if (s !== v) (copy ??= { ...obj })[key] = s;
    }
    return copy ?? value;
  }
}

/** cyrb53: a fast 53-bit string hash; collisions are negligible for comparing outputs in a window. */
export function hashText(text: string): string {
  return hash53(text).toString(36);
}

/** Where `Canonicalizer.write` puts the canonical text's pieces. */
interface Pieces {
  add(text: string): void;
  /** A string as `quote` writes it. */
  addQuoted(text: string): void;
  /**
   * A flat object (`flatAndInOrder`: keys in order, values strings, finite numbers, booleans or
   * null) as `JSON.stringify` writes it.
   */
  addFlat(obj: Readonly<Record<string, unknown>>, keys: readonly string[]): void;
}

/** The pieces joined. */
class TextPieces implements Pieces {
  text = '';

  start(): void {
    this.text = '';
  }

  add(text: string): void {
    this.text += text;
  }

  addQuoted(text: string): void {
    this.text += quote(text);
  }

  addFlat(obj: Readonly<Record<string, unknown>>): void {
    this.text += JSON.stringify(obj);
  }
}

/** Looks for each quoted string in a text instead of writing it; `missing` from the first one it lacks. */
class Occurrences implements Pieces {
  missing = false;
  constructor(private readonly text: string) {}

  add(): void {}

  addQuoted(text: string): void {
    if (!this.missing && !this.text.includes(quote(text))) this.missing = true;
  }

  addFlat(obj: Readonly<Record<string, unknown>>, keys: readonly string[]): void {
    for (const key of keys) {
      this.addQuoted(key);
      const v = obj[key];
      if (typeof v === 'string') this.addQuoted(v);
    }
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** cyrb53 fed in pieces: `end()` is `hash53` of the pieces joined, and no text is joined. */
export class Hash53 implements Pieces {
  private h1 = 0;
  private h2 = 0;

  start(): void {
    this.h1 = 0xdeadbeef;
    this.h2 = 0x41c6ce57;
  }

  add(text: string): void {
    let h1 = this.h1;
    let h2 = this.h2;
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    this.h1 = h1;
    this.h2 = h2;
  }

  /**
   * A string as `quote` writes it: quoted as it is, read once, unless a character needs escaping
   * (then as `JSON.stringify` writes it).
   */
  addQuoted(text: string): void {
    let h1 = Math.imul(this.h1 ^ QUOTE, 2654435761);
    let h2 = Math.imul(this.h2 ^ QUOTE, 1597334677);
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (ch < 0x20 || ch === QUOTE || ch === BACKSLASH || (ch >= 0xd800 && ch <= 0xdfff)) {
        this.add(JSON.stringify(text));
        return;
      }
      h1 = Math.imul(h1 ^ ch, 2654435761);
      h2 = Math.imul(h2 ^ ch, 1597334677);
    }
    this.h1 = Math.imul(h1 ^ QUOTE, 2654435761);
    this.h2 = Math.imul(h2 ^ QUOTE, 1597334677);
  }

  /** The object's text fed piece by piece: `JSON.stringify` would build a string only to be hashed. */
  addFlat(obj: Readonly<Record<string, unknown>>, keys: readonly string[]): void {
    this.add('{');
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string;
      if (i > 0) this.add(',');
      this.addQuoted(key);
      this.add(':');
      const v = obj[key];
      if (typeof v === 'string') this.addQuoted(v);
      else this.add(v === null ? 'null' : String(v));
    }
    this.add('}');
  }

  end(): number {
    return finish53(this.h1, this.h2);
  }
}

/** cyrb53's last step: its two 32-bit states mixed into a non-negative 53-bit integer. */
function finish53(a: number, b: number): number {
  const h1 = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  const h2 = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

const textHash = new Hash53();

/** cyrb53's number (`hashText` is its text): comparing numbers costs no string to build. */
export function hash53(text: string): number {
  textHash.start();
  textHash.add(text);
  return textHash.end();
}

/**
 * `hash53(text.replace(/\s+/g, ' ').trim().toLowerCase())` for an ASCII text, computed as it is read:
 * white space runs fed as one space, none at either end, capitals as small letters, no string
 * built. Undefined for a text with a character past ASCII, whose white space and case only the
 * expressions tell (a no-break space is white space, `İ` lower-cases to two characters).
 */
export function hashFoldedAscii(text: string): number | undefined {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  // A run of white space is fed as one space before the character after it: none after the last
  // character, and none before the first (`space` is set only once one was fed).
  let fed = false;
  let space = false;
  for (let i = 0; i < text.length; i++) {
    let ch = text.charCodeAt(i);
    if (ch > 0x7f) return undefined;
    if (isAsciiSpace(ch)) {
      space = fed;
      continue;
    }
    if (space) {
      h1 = Math.imul(h1 ^ 0x20, 2654435761);
      h2 = Math.imul(h2 ^ 0x20, 1597334677);
      space = false;
    }
    fed = true;
    if (ch >= 0x41 && ch <= 0x5a) ch += 0x20;
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  return finish53(h1, h2);
}

/** `\s` within ASCII: tab, line feed, vertical tab, form feed, carriage return, space. */
function isAsciiSpace(ch: number): boolean {
  return ch === 0x20 || (ch >= 0x09 && ch <= 0x0d);
}

/**
 * A running hash of a sequence of numbers (hashes, keys): `mixHash(mixHash(seed, a), b)` tells the
 * sequence a, b apart from b, a and from any other, as cyrb53 does for characters, with no text built.
 * Each number is taken as two 32-bit halves; the result is a non-negative 53-bit integer.
 */
export function mixHash(seed: number, value: number): number {
  const lo = value >>> 0;
  const hi = Math.floor(value / 4294967296) | 0;
  const h1 = Math.imul((seed >>> 0) ^ lo, 2654435761) ^ 0xdeadbeef;
  const h2 = Math.imul((Math.floor(seed / 4294967296) | 0) ^ hi, 1597334677) ^ 0x41c6ce57;
  return finish53(h1, h2);
}

/**
 * Shortens a text for a one-line message, its credentials masked: every finding quotes what it
 * read through here (an error, a command), and a finding is shown, logged and sent on.
 */
export function clip(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  // Masked before the cut (a secret cut in half is still half a secret), on the part that can show.
  const masked = maskSecrets(flat.length <= max + 512 ? flat : flat.slice(0, max + 512));
  return masked.length <= max ? masked : `${masked.slice(0, max - 1)}…`;
}

const PROSE_TIME = /\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b/g;
/** A UUID anywhere in a text, in either case (what `proseKey` and identical-output's key set aside). */
export const UUID_IN_TEXT = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi;
const PROSE_TOKEN = /[A-Za-z0-9_-]{6,}/g;
const HEX = /^[0-9a-f]+$/i;
const DIGITS = /^\d+$/;

/** A word that is an id rather than language: a long number, a hex hash, a long token of letters and many digits. */
function idToken(token: string): string {
  if (DIGITS.test(token)) return '<n>';
  let digits = 0;
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) >= 48 && token.charCodeAt(i) <= 57) digits++;
  if (digits === 0) return token;
  if (token.length >= 8 && HEX.test(token) && digits < token.length) return '<id>';
  if (token.length >= 12 && digits >= 4) return '<id>';
  return token;
}

/**
 * A message (a prompt, an answer, a subtask's instruction) as it is compared with the next one:
 * what changes between two sendings of the same message is set aside — white space, case,
 * timestamps and clock times, UUIDs, long numbers, hex hashes, and tokens of letters and many
 * digits (`toolu_01AbC…`, `req_8f3…`). Short numbers stay: "fix test 3" is not "fix test 4".
 */
export function proseKey(text: string): string {
  return text.replace(UUID_IN_TEXT, '<id>').replace(PROSE_TIME, '<t>').replace(PROSE_TOKEN, idToken).replace(/\s+/g, ' ').trim().toLowerCase();
}
