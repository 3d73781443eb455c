import { hashText } from './canonical';
import { maskSecrets } from './secrets';

export { MASK, maskSecrets, scanSecrets, SHORTEST_SECRET } from './secrets';

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
