/**
 * Credentials, found by their shapes and masked wherever the guardian writes or sends a text it
 * read: the hook's records, the findings' words (`clip`), the receiver's events. Pure: no I/O.
 */

export const MASK = '[secret masked]';

/*
 * Common credential shapes. Every pattern is linear: a fixed prefix, then one bounded character
 * class, so masking costs the same on hostile text as on any other (and it only ever runs on
 * bounded text: at most MAX_KEPT_TEXT characters).
 */
/** How a name that holds a secret ends: `password`, `PGPASSWORD`, `AWS_SECRET_ACCESS_KEY`, `client_secret`, `GITHUB_TOKEN`, `x-api-key`, `AccountKey`. */
const SECRET_NAME = /(?:api[_-]?key|access[_-]?token|auth[_-]?token|client[_-]?secret|secret[_-]?(?:access[_-]?)?key|account[_-]?key|shared[_-]?access[_-]?key|private[_-]?key|password|passwd|secret|token)$/i;

const SECRETS: readonly (readonly [RegExp, string])[] = [
  [/-----BEGIN [A-Z ]{0,40}PRIVATE KEY-----[^-]{0,8192}-----END [A-Z ]{0,40}PRIVATE KEY-----/g, MASK],
  // Vendors' token shapes (each vendor's documented prefix).
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, MASK],
  [/\bgh[pousr]_[A-Za-z0-9]{30,255}/g, MASK],
  [/\bgithub_pat_[A-Za-z0-9_]{20,255}/g, MASK],
  [/\bglpat-[A-Za-z0-9_-]{20,255}/g, MASK],
  [/\bsk-[A-Za-z0-9_-]{20,255}/g, MASK],
  [/\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,255}/g, MASK],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,255}/g, MASK],
  [/\bhooks\.slack\.com\/services\/[A-Za-z0-9/]{20,255}/g, MASK],
  [/\bAIza[0-9A-Za-z_-]{35}/g, MASK],
  [/\bya29\.[A-Za-z0-9_-]{20,4096}/g, MASK],
  [/\bnpm_[A-Za-z0-9]{36}/g, MASK],
  [/\bpypi-AgE[A-Za-z0-9_-]{50,4096}/g, MASK],
  [/\bhf_[A-Za-z0-9]{30,255}/g, MASK],
  [/\bSG\.[A-Za-z0-9_-]{16,64}\.[A-Za-z0-9_-]{16,64}/g, MASK],
  [/\bSK[0-9a-f]{32}\b/g, MASK],
  [/\bdo[opr]_v1_[a-f0-9]{64}/g, MASK],
  [/\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}/g, MASK],
  [/\bdckr_pat_[A-Za-z0-9_-]{20,255}/g, MASK],
  [/\bdapi[a-f0-9]{32}/g, MASK],
  [/\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,255}/g, MASK],
  // A token starts where no token character stands before it: one scan per token, not one per 'eyJ' inside it.
  [/(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,4096}\.[A-Za-z0-9_-]{0,4096}/g, MASK],
  [/\b(Bearer|Basic|token) [A-Za-z0-9._~+/-]{16,4096}=*/gi, `$1 ${MASK}`],
  // A password in a URL: `postgres://user:PASSWORD@host` (the user's name stays).
  [/:\/\/([^\s/:@]{0,256}):[^\s/:@]{6,256}@/g, `://$1:${MASK}@`],
  // A value named as a secret: `password=…`, `PGPASSWORD=…`, `AWS_SECRET_ACCESS_KEY=…`, `"client_secret": "…"`,
  // `GITHUB_TOKEN=…`, `AccountKey=…`, and the same as a command's flag (`--password …`).
  [/(--(?:password|passwd|token|api-key|secret|client-secret)[ =])[^\s"']{6,4096}/gi, `$1${MASK}`],
];

/**
 * The shortest text any shape above matches: `token=` and six characters. A shorter
 * text holds none, and is not scanned (the hook's arguments are often that short, and the first
 * scan compiles every pattern).
 */
export const SHORTEST_SECRET = 12;

/**
 * A piece every shape above holds (each vendor's prefix, `eyJ`, `bearer`, `basic`, `token`, `://`,
 * and how every secret's name ends: `key`, `token`, `secret`, `passw…`), found in one scan with
 * case ignored: a text without any holds no credential, and is not scanned shape by shape (most
 * texts: commands, paths, compiler errors).
 *
 * The pieces, one by one: `-----BEGIN`, `AKIA`, `ASIA`, `AIza`, `gh[pousr]_`, `github_pat_`,
 * `glpat-`, `sk-`, `SK[0-9a-f]`, `SG.`, `shp`, `sq0`, `secret`, `k_live_`, `k_test_`, `key`, `xox`,
 * `hooks.slack`, `hf_`, `ya29.`, `npm_`, `pypi-`, `passw`, `do[opr]_v1_`, `dckr_pat_`, `dapi`, `eyJ`,
 * `bearer`, `basic`, `token`, `://`. Written as a tree by their first letter (the same texts match:
 * a test holds it to the list): a list of 31 tried at every character took twice as long, and this
 * look runs on every value an agent's telemetry carries.
 */
export const MAY_HOLD_SECRET = /-----BEGIN|a(?:kia|sia|iza)|g(?:h[pousr]_|ithub_pat_|lpat-)|s(?:k[-0-9a-f]|g\.|hp|q0|ecret)|k(?:_live_|_test_|ey)|xox|h(?:ooks\.slack|f_)|ya29\.|npm_|p(?:ypi-|assw)|d(?:o[opr]_v1_|ckr_pat_|api)|eyj|b(?:earer|asic)|token|:\/\//i;

/** The text with the credential shapes above replaced by a mask. */
export function maskSecrets(text: string): string {
  return text.length < SHORTEST_SECRET || !MAY_HOLD_SECRET.test(text) ? text : scanSecrets(text);
}

/** `maskSecrets` without its shortcut (exported for the test that holds the shortcut to it). */
export function scanSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRETS) out = out.replace(pattern, replacement);
  return maskNamedValues(out);
}

/**
 * A name then `=` or `:` and at least six characters of value. A name is matched whole from its
 * first character (one try per name, never one per letter in it), the value only looked at: a name
 * that holds no secret lets the scan go on inside its value (`Bash: AWS_SECRET_ACCESS_KEY=…`).
 */
const NAMED_VALUE = /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,128})(["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)(?=[^\s"'&,;]{6})/g;
const VALUE_END = /[\s"'&,;]/;
const MAX_VALUE = 4096;

/** Values named as secrets (`SECRET_NAME`), masked to their end. */
function maskNamedValues(text: string): string {
  let out = '';
  let last = 0;
  NAMED_VALUE.lastIndex = 0;
  for (let m = NAMED_VALUE.exec(text); m !== null; m = NAMED_VALUE.exec(text)) {
    const name = m[1] as string;
    if (!SECRET_NAME.test(name)) continue;
    const start = m.index + m[0].length;
    let end = start;
    while (end < text.length && end - start < MAX_VALUE && !VALUE_END.test(text[end] as string)) end++;
    out += `${text.slice(last, start)}${MASK}`;
    last = end;
    NAMED_VALUE.lastIndex = end;
  }
  return last === 0 ? text : out + text.slice(last);
}
