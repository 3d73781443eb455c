import { memoOfText } from './memo';

/*
 * What changes from one run of the same command to the next without the result changing: a clock
 * time in a log file's name (npm's `_logs/2026-11-25T22_10_35_247Z-debug-0.log`), an id made for
 * the run (a UUID, a long hex id), how long it took ("Wall time: 0.0306 seconds", "in 12ms"), a
 * process id. Two outcomes that differ only there ended the same way: compared without them.
 * Counts, line numbers and other numbers stay: "2/6 steps" then "3/6 steps" is progress.
 */
const ANY_RESULT = [
  /\b\d{4}-\d{2}-\d{2}[T _]\d{2}[:_]\d{2}[:_]\d{2}(?:[._,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?/.source,
  /\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b/.source,
  /\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{12,}\b/.source,
  /\b\d+(?:\.\d+)?\s?(?:ms|milliseconds?|s|secs?|seconds?)\b/.source,
  /\b(?:[Pp][Ii][Dd]|[Pp][Gg][Ii][Dd]|[Pp]rocess [Gg]roup PGID)\b[:= ]\s*\d+/.source,
];

/*
 * Besides, in an error only: what a log line, a crash or a temporary folder adds to the same
 * failure each run. A clock time without its date (`[19:25:30.123]`, syslog's `Nov 27 19:25:30`),
 * a syslog process id (`node[12345]:`), a 64-bit memory address, a random fraction
 * (`0.8234123412`), a number of six digits or more (an epoch time, a request number), a temporary
 * folder (`/tmp/tmp.AbC123`, macOS's `/var/folders/…/T/x`, Windows' `…\AppData\Local\Temp\x`, a
 * `mktemp` name). An output keeps them: there a new number may be progress (a count that grows, a
 * file that grows), and a command's result may be a time or a folder it made. Small numbers stay
 * in both ("expected 4, got 3" is not "got 2"), and so do ports and addresses (127.0.0.1:5432).
 */
// `X{6}X*`, not `X{6,}`: V8 runs the latter ten times slower on a long run of X.
const ERROR_ONLY = [
  /\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}\d{1,2} \d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?/.source,
  /\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b/.source,
  /(?<=[A-Za-z])\[\d\d+\]:/.source,
  /\b0x[0-9a-fA-F]{9}[0-9a-fA-F]*\b/.source,
  /\b\d+\.\d{6}\d*/.source,
  /\b\d{6}\d*\b/.source,
  // The temporary folder's first name only: what the command wrote inside it is its own.
  /(?<![\w.~-])\/(?:private\/)?(?:(?:var\/)?tmp|var\/folders\/[\w+-]+\/[\w+-]+\/[A-Z])\/[^\s/\\'"`:;,()<>[\]{}|]+/.source,
  /\bAppData[\\/]+Local[\\/]+Temp[\\/]+[^\s/\\'"`:;,()<>[\]{}|]+/.source,
  /\btmp[._-]?(?=[A-Za-z]*\d)[A-Za-z0-9]{6}[A-Za-z0-9]*\b/.source,
];

/**
 * The alternatives as one expression that V8 runs fast: those that start at a word boundary (`\b`)
 * grouped behind one `\b` and a look at the first character (each such alternative's first
 * character is a digit, a hex digit, `P`/`p`, or the first letter of a month, `AppData` or `tmp`),
 * so that a position where none can start is passed at once; V8 tried every alternative at every
 * position of the text (an output of 1.8 KB: 31 µs, now 6 µs). The same matches, at the same places,
 * in the same order: the grouped alternatives keep their order, and those left outside (starting
 * with `[` or `/`) cannot start where a grouped one can (`test/unit/core/fastPaths.test.ts` holds
 * it to the plain alternation on generated texts).
 */
export function fastAlternation(sources: readonly string[]): RegExp {
  const bounded = sources.filter((s) => s.startsWith('\\b')).map((s) => s.slice(2));
  const others = sources.filter((s) => !s.startsWith('\\b'));
  const firsts = new Set<string>();
  for (const s of bounded) {
    const first = FIRST_CHARS.find(([re]) => re.test(s))?.[1];
    if (first === undefined) throw new Error(`runNoise: no first character known for /${s}/`);
    firsts.add(first);
  }
  const grouped = `\\b(?=[${[...firsts].join('')}])(?:${bounded.join('|')})`;
  return new RegExp([grouped, ...others].join('|'), 'g');
}

/** What each grouped alternative starts with, by the shape of its source. */
const FIRST_CHARS: readonly (readonly [RegExp, string])[] = [
  [/^\\d/, '0-9'],
  [/^\[0-9a-fA-F\]/, '0-9a-fA-F'],
  [/^\(\?=\[0-9a-fA-F\]/, '0-9a-fA-F'],
  [/^\(\?:\[Pp\]/, 'Pp'],
  [/^\(\?:Jan\|Feb\|Mar\|Apr\|May\|Jun\|Jul\|Aug\|Sep\|Oct\|Nov\|Dec\)/, 'JFMASOND'],
  [/^0x/, '0'],
  [/^AppData/, 'A'],
  [/^tmp/, 't'],
];

/** The plain alternations, which the fast ones must match exactly (tests). */
export const NOISE_SOURCES = { output: ANY_RESULT, error: [...ANY_RESULT, ...ERROR_ONLY] } as const;

const OUTPUT_NOISE = fastAlternation(NOISE_SOURCES.output);
const ERROR_NOISE = fastAlternation(NOISE_SOURCES.error);

/** A result's text without what changes from run to run of the same command, in one pass: an output's (a text without a digit has none) or an error's (the wider set above). */
function withoutRunNoise(text: string, of: 'output' | 'error'): string {
  if (of === 'error') return text.replace(ERROR_NOISE, '\u0000');
  return /\d/.test(text) ? text.replace(OUTPUT_NOISE, '\u0000') : text;
}

/**
 * A result's text as compared: without its run noise, unless that is all it says (`date -Iseconds`
 * prints nothing but a clock time: the time is its result, and a new one is a new result).
 */
export function comparedText(text: string, of: 'output' | 'error'): string {
  // An error is read so by several signals, and a loop is the same error again: remembered.
  return of === 'error' ? comparedError(text) : compared(text, of);
}

function compared(text: string, of: 'output' | 'error'): string {
  const masked = withoutRunNoise(text, of);
  return masked === text || /[\p{L}\p{N}]/u.test(masked) ? masked : text;
}

const comparedError = memoOfText((text) => compared(text, 'error'));
