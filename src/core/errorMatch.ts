import { boundedErrorText } from './errorClass';
import { failureLine } from './errorLines';
import { comparedText } from './runNoise';

/**
 * Seed 003's fuzzy error matching: two error texts are "the same error" when they are identical,
 * share their first 50 characters, one contains the other, share an error-type prefix such as
 * `TypeError:`, or overlap by 80% or more of their words; and, beyond the seed, when the line that
 * says what failed is the same in both (errorLines.ts). Each compared without its run noise
 * (runNoise.ts: the clock times, ids, process ids and temporary folders that change from run to
 * run of the same failing command).
 */
export interface ErrorMatchOptions {
  readonly prefixLength: number;
  readonly overlap: number;
  /** The shorter text must be at least this long before "one contains the other" counts. */
  readonly minContainedLength: number;
}

export const DEFAULT_ERROR_MATCH: ErrorMatchOptions = { prefixLength: 50, overlap: 0.8, minContainedLength: 12 };

export type ErrorMatchRule = 'exact' | 'prefix' | 'contains' | 'error-type' | 'overlap' | 'failure-line';

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

/** The text's words, lower-cased, sorted (a multiset: a word said twice is there twice). */
function words(text: string): string[] {
  const list = text.toLowerCase().split(/[^a-z0-9_]+/);
  let n = 0;
  for (const w of list) if (w.length > 0) list[n++] = w;
  list.length = n;
  return list.sort();
}

/** Dice coefficient over word multisets, 0..1. */
export function wordOverlap(a: string, b: string): number {
  return overlapOf(new ErrorText(a), new ErrorText(b));
}

/**
 * An error text prepared once for many comparisons, when first compared: most errors in a log
 * are followed by a success and never compared at all.
 */
export class ErrorText {
  private normalized: string | undefined;
  private typeName: string | null | undefined;
  private wordList: string[] | undefined;
  private failureText: string | null | undefined;

  /** `raw`: the error as written, which is what a person is shown. */
  constructor(readonly raw: string) {}

  /** The text as compared, never shown: without its run noise, white space collapsed. */
  get compared(): string {
    // Head and tail only, like classification: comparing megabytes of an error would cost time
    // the hook does not have, and two errors that differ only past their first 4 KB and before
    // their last 4 KB are the same error for a loop.
    return (this.normalized ??= normalize(comparedText(boundedErrorText(this.raw), 'error')));
  }

  get type(): string | undefined {
    if (this.typeName === undefined) this.typeName = errorType(this.compared) ?? null;
    return this.typeName ?? undefined;
  }

  /** The line that says what failed (errorLines.ts `failureLine`), as compared; null when none says it. */
  get failure(): string | null {
    if (this.failureText === undefined) {
      const line = failureLine(this.raw);
      this.failureText = line === undefined ? null : normalize(comparedText(line, 'error'));
    }
    return this.failureText;
  }

  /** Its words, sorted (see `words`). */
  words(): readonly string[] {
    return (this.wordList ??= words(this.compared));
  }
}

/**
 * The Dice coefficient of two texts' word multisets: twice the words they share (a word counted as
 * often as the text that says it less often says it) over all their words; found by walking both
 * sorted lists together.
 */
function overlapOf(a: ErrorText, b: ErrorText): number {
  const wa = a.words();
  const wb = b.words();
  if (wa.length + wb.length === 0) return 0;
  let common = 0;
  let i = 0;
  let j = 0;
  while (i < wa.length && j < wb.length) {
    const x = wa[i] as string;
    const y = wb[j] as string;
    if (x === y) {
      common++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return (2 * common) / (wa.length + wb.length);
}

/** The first rule by which `a` and `b` are the same error, or undefined. */
export function sameError(a: string | ErrorText, b: string | ErrorText, opts: ErrorMatchOptions = DEFAULT_ERROR_MATCH): ErrorMatchRule | undefined {
  const ea = typeof a === 'string' ? new ErrorText(a) : a;
  const eb = typeof b === 'string' ? new ErrorText(b) : b;
  const x = ea.compared;
  const y = eb.compared;
  if (x.length === 0 || y.length === 0) return undefined;
  if (x === y) return 'exact';
  if (x.length >= opts.prefixLength && y.length >= opts.prefixLength && x.startsWith(y.slice(0, opts.prefixLength))) return 'prefix';
  const shorter = x.length <= y.length ? x : y;
  const longer = shorter === x ? y : x;
  if (shorter.length >= opts.minContainedLength && longer.includes(shorter)) return 'contains';
  if (ea.type !== undefined && ea.type === eb.type) return 'error-type';
  if (overlapOf(ea, eb) >= opts.overlap) return 'overlap';
  // The line that says what failed is the same, whatever else each printed (`--verbose`, a longer
  // trace, another run's log lines): a person reads one error.
  const fa = ea.failure;
  if (fa !== null && fa.length >= opts.minContainedLength && fa === eb.failure) return 'failure-line';
  return undefined;
}
