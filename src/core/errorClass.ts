import { memoOfText } from './memo';
import { comparedText } from './runNoise';

/** Seed 004's error classification: each kind of failure has its own retry budget. */
export type ErrorKind =
  | 'rate_limit'
  | 'timeout'
  | 'network'
  | 'missing_parameter'
  | 'validation'
  | 'file_not_found'
  | 'permission_denied'
  | 'unknown';

export type ErrorFamily = 'transient' | 'deterministic' | 'unknown';

export const FAMILY_OF: Readonly<Record<ErrorKind, ErrorFamily>> = {
  rate_limit: 'transient',
  timeout: 'transient',
  network: 'transient',
  missing_parameter: 'deterministic',
  validation: 'deterministic',
  file_not_found: 'deterministic',
  permission_denied: 'deterministic',
  unknown: 'unknown',
};

/**
 * How much of an error is classified: its first and last 4 KB. An error's kind shows in its
 * opening (the exception, the status) or its end (the last line of a trace); an agent can write
 * an error of megabytes, and classifying all of it would cost time the hook does not have.
 */
export const CLASSIFIED_HEAD = 4096;
export const CLASSIFIED_TAIL = 4096;

/** The part of an error that is classified and compared: all of it when short, else its head and tail. */
export function boundedErrorText(text: string): string {
  if (text.length <= CLASSIFIED_HEAD + CLASSIFIED_TAIL) return text;
  return `${text.slice(0, CLASSIFIED_HEAD)}\n…\n${text.slice(text.length - CLASSIFIED_TAIL)}`;
}

/**
 * "expected X, got Y" / "expected X but received Y" on one line. Done by hand: the regex
 * `/expected .* (got|received)/` retries from every "expected" to the line's end, quadratic in the
 * line's length. Here each line is scanned once: its first "expected " then a later " got" or
 * " received".
 */
function expectedGot(text: string): boolean {
  for (const line of text.toLowerCase().split('\n')) {
    const at = line.indexOf('expected ');
    if (at < 0) continue;
    const rest = line.slice(at + 'expected '.length);
    if (rest.includes(' got') || rest.includes(' received')) return true;
  }
  return false;
}

type Rule = RegExp | ((text: string) => boolean);

/**
 * A connection the other end refused or reset (`ECONNREFUSED`, "Connection refused", psql's
 * "could not connect to server"): the service is not there, or dropped the call. Transient, like
 * the network, but said as what it is (advice.ts).
 */
export const REFUSED_CONNECTION = /\bECONN(?:REFUSED|RESET)\b|connection (?:was )?(?:refused|reset)|could not connect to (?:the )?server/i;

// Order matters: the first rule that matches wins, most specific first. No pattern may backtrack
// super-linearly (the lint's regexp rules hold it so): the text is an agent's.
const RULES: ReadonlyArray<readonly [ErrorKind, ...Rule[]]> = [
  // A refused or reset connection is the network whatever else its text says (a client's
  // `connectionTimeoutMillis` echoed beside it is no time-out): told first.
  ['network', REFUSED_CONNECTION],
  ['rate_limit', /\b429\b|rate[ -]?limit|too many requests|quota exceeded|throttl/i],
  ['timeout', /timed? ?out|timeout|\bETIMEDOUT\b|deadline exceeded|\b408\b|\b504\b/i],
  ['network', /\bECONNABORTED\b|\bEAI_AGAIN\b|\bENOTFOUND\b|\bEPIPE\b|socket hang up|network|connection (closed|aborted)|\b50[23]\b|service unavailable|bad gateway/i],
  ['permission_denied', /permission denied|\bEACCES\b|\bEPERM\b|not permitted|forbidden|\b403\b|access (is )?denied|unauthori[sz]ed|\b401\b/i],
  // "not found" of any kind (a file, a search string, a 404) fails the same way on every retry.
  ['file_not_found', /\bENOENT\b|no such file|FileNotFound|does not exist|\bnot found\b|cannot find (the )?(file|path|module)|\b404\b/i],
  ['missing_parameter', /missing (a )?(required )?(param|parameter|argument|field|property|key)|required (param|parameter|argument|field|property)|is required\b|missing \d+ required/i],
  ['validation', /TypeError|ValueError|ValidationError|validation|invalid|schema|must be (a|an|of)|malformed|SyntaxError|JSONDecodeError|<tool_use_error>/i, expectedGot],
];

/** The kind of an error; remembered per text (memo.ts): a loop is the same error again. */
export const classifyError: (text: string) => ErrorKind = memoOfText(classify);

function classify(text: string): ErrorKind {
  // Without its run noise: a clock time's milliseconds (`19:25:30.504`) or a process id is no
  // HTTP status.
  const bounded = comparedText(boundedErrorText(text), 'error');
  // Indexed, not destructured: this runs for every failure, and `[kind, ...rules]` built an array each time.
  for (const entry of RULES) {
    for (let i = 1; i < entry.length; i++) {
      const rule = entry[i] as Rule;
      if (typeof rule === 'function' ? rule(bounded) : rule.test(bounded)) return entry[0];
    }
  }
  return 'unknown';
}
