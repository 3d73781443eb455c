import { hashText } from './canonical';

/**
 * What the hook keeps of a call's arguments and of its result: enough to tell one call or outcome
 * from another (a head, a tail and a fingerprint of the whole), never a whole 1 MB file read, and
 * never a credential verbatim. The same input always gives the same record, so repeats still
 * compare equal. Pure: no I/O.
 */

/** A text longer than this is kept as its head, its tail and a fingerprint of the whole. */
export const MAX_KEPT_TEXT = 4096;
const HEAD = 2048;
const TAIL = 1024;
/** A value whose record would be larger than this is kept as one bounded text. */
export const MAX_KEPT_VALUE = 16 * 1024;
const MAX_DEPTH = 16;
const MAX_ITEMS = 200;

export const MASK = '[secret masked]';

/*
 * Common credential shapes. Every pattern is linear: a fixed prefix, then one bounded character
 * class, so masking costs the same on hostile text as on any other (and it only ever runs on
 * bounded text: at most MAX_KEPT_TEXT characters).
 */
const SECRETS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[^-]{0,8192}-----END [A-Z ]{0,40}PRIVATE KEY-----/g, MASK],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,255}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,255}/g, MASK],
  [/\bsk-[A-Za-z0-9_-]{20,255}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,255}/g, MASK],
  [/\bAIza[0-9A-Za-z_-]{35}/g, MASK],
  [/\bnpm_[A-Za-z0-9]{36}/g, MASK],
  // A token starts where no token character stands before it: one scan per token, not one per 'eyJ' inside it.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{0,4096}/g, MASK],
  [/\b(Bearer|Basic|token) [A-Za-z0-9._~+/-]{16,4096}=*/gi, `$1 ${MASK}`],
  [/\b(api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?key|password|passwd)(["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)[^\s"'&,;]{6,4096}/gi, `$1$2${MASK}`],
];

/**
 * The shortest text any shape above matches: `passwd=` or `apikey:` and six characters. A shorter
 * text holds none, and is not scanned (the hook's arguments are often that short, and the first
 * scan compiles every pattern).
 */
export const SHORTEST_SECRET = 13;

/** The text with the credential shapes above replaced by a mask. */
export function maskSecrets(text: string): string {
  return text.length < SHORTEST_SECRET ? text : scanSecrets(text);
}

/** `maskSecrets` without its shortcut (exported for the test that holds the shortcut to it). */
export function scanSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return out;
}

/** A text as the hook keeps it: whole (masked) when short, else masked head and tail around its length and fingerprint. */
export function boundedText(text: string): string {
  if (text.length <= MAX_KEPT_TEXT) return maskSecrets(text);
  return `${maskSecrets(text.slice(0, HEAD))}\n… [${text.length} characters, fingerprint ${hashText(text)}] …\n${maskSecrets(text.slice(-TAIL))}`;
}

function walk(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return boundedText(v);
  if (typeof v !== 'object' || v === null) return v;
  if (depth >= MAX_DEPTH) return '[nested too deep]';
  if (Array.isArray(v)) {
    const items = v.slice(0, MAX_ITEMS).map((x) => walk(x, depth + 1));
    if (v.length > MAX_ITEMS) items.push(`[${v.length - MAX_ITEMS} more items]`);
    return items;
  }
  const out: Record<string, unknown> = {};
  let n = 0;
  for (const key of Object.keys(v)) {
    if (n++ === MAX_ITEMS) {
      out['…'] = `[${Object.keys(v).length - MAX_ITEMS} more keys]`;
      break;
    }
    out[key] = walk((v as Record<string, unknown>)[key], depth + 1);
  }
  return out;
}

/**
 * A call's arguments or result as the hook keeps them: strings bounded and masked, nesting and
 * breadth cut, and the whole at most about MAX_KEPT_VALUE (else one bounded text of it).
 */
export function boundedValue(v: unknown): unknown {
  const kept = walk(v, 0);
  const text = JSON.stringify(kept) ?? '';
  return text.length <= MAX_KEPT_VALUE ? kept : boundedText(text);
}

/** Arguments as the hook keeps them: an object, bounded like any value. */
export function boundedArgs(args: Record<string, unknown>): Record<string, unknown> {
  const kept = boundedValue(args);
  return typeof kept === 'object' && kept !== null && !Array.isArray(kept) ? (kept as Record<string, unknown>) : { input: kept };
}
