/**
 * Seed 003's fuzzy error matching: two error texts are "the same error" when they are identical,
 * share their first 50 characters, one contains the other, share an error-type prefix such as
 * `TypeError:`, or overlap by 80% or more of their words.
 */
export interface ErrorMatchOptions {
  readonly prefixLength: number;
  readonly overlap: number;
  /** The shorter text must be at least this long before "one contains the other" counts. */
  readonly minContainedLength: number;
}

export const DEFAULT_ERROR_MATCH: ErrorMatchOptions = { prefixLength: 50, overlap: 0.8, minContainedLength: 12 };

export type ErrorMatchRule = 'exact' | 'prefix' | 'contains' | 'error-type' | 'overlap';

function normalize(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * `TypeError:`, `ValueError:`, `json.decoder.JSONDecodeError:`, `FileNotFoundException:`...
 * A bare `Error:` or `error:` names no type and would make every error alike, so it does not count.
 */
const ERROR_TYPE = /^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*(?:Error|Exception|Fault|Failure))\s*:/;

export function errorType(text: string): string | undefined {
  const m = ERROR_TYPE.exec(normalize(text));
  if (!m || !m[1]) return undefined;
  return /^(error|exception)$/i.test(m[1]) ? undefined : m[1];
}

function words(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const w of text.toLowerCase().split(/[^a-z0-9_]+/)) {
    if (w.length === 0) continue;
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return counts;
}

/** Dice coefficient over word multisets, 0..1. */
export function wordOverlap(a: string, b: string): number {
  const wa = words(a);
  const wb = words(b);
  let sizeA = 0;
  let sizeB = 0;
  let common = 0;
  for (const n of wa.values()) sizeA += n;
  for (const [w, n] of wb) {
    sizeB += n;
    common += Math.min(n, wa.get(w) ?? 0);
  }
  if (sizeA + sizeB === 0) return 0;
  return (2 * common) / (sizeA + sizeB);
}

/** The first rule by which `a` and `b` are the same error, or undefined. */
export function sameError(a: string, b: string, opts: ErrorMatchOptions = DEFAULT_ERROR_MATCH): ErrorMatchRule | undefined {
  const x = normalize(a);
  const y = normalize(b);
  if (x.length === 0 || y.length === 0) return undefined;
  if (x === y) return 'exact';
  if (x.length >= opts.prefixLength && y.length >= opts.prefixLength && x.slice(0, opts.prefixLength) === y.slice(0, opts.prefixLength)) {
    return 'prefix';
  }
  const [shorter, longer] = x.length <= y.length ? [x, y] : [y, x];
  if (shorter.length >= opts.minContainedLength && longer.includes(shorter)) return 'contains';
  const tx = errorType(x);
  if (tx !== undefined && tx === errorType(y)) return 'error-type';
  if (wordOverlap(x, y) >= opts.overlap) return 'overlap';
  return undefined;
}
