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

// Order matters: the first rule that matches wins, most specific first.
const RULES: ReadonlyArray<readonly [ErrorKind, RegExp]> = [
  ['rate_limit', /\b429\b|rate[ -]?limit|too many requests|quota exceeded|throttl/i],
  ['timeout', /timed? ?out|timeout|\bETIMEDOUT\b|deadline exceeded|\b408\b|\b504\b/i],
  ['network', /\bECONN(RESET|REFUSED|ABORTED)\b|\bEAI_AGAIN\b|\bENOTFOUND\b|\bEPIPE\b|socket hang up|network|connection (reset|refused|closed|aborted)|\b50[23]\b|service unavailable|bad gateway/i],
  ['permission_denied', /permission denied|\bEACCES\b|\bEPERM\b|not permitted|forbidden|\b403\b|access (is )?denied|unauthori[sz]ed|\b401\b/i],
  // "not found" of any kind (a file, a search string, a 404) fails the same way on every retry.
  ['file_not_found', /\bENOENT\b|no such file|FileNotFound|does not exist|\bnot found\b|cannot find (the )?(file|path|module)|\b404\b/i],
  ['missing_parameter', /missing (a )?(required )?(param|parameter|argument|field|property|key)|required (param|parameter|argument|field|property)|is required\b|missing \d+ required/i],
  ['validation', /TypeError|ValueError|ValidationError|validation|invalid|schema|expected .* (got|received)|must be (a|an|of)|malformed|SyntaxError|JSONDecodeError|<tool_use_error>/i],
];

export function classifyError(text: string): ErrorKind {
  for (const [kind, re] of RULES) if (re.test(text)) return kind;
  return 'unknown';
}
