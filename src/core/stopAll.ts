/** Seed 002's circuit breaker `.github/guardian/STOP_ALL`: first line `STATUS TIMESTAMP`. */
export type StopStatus = 'CLEAR' | 'STOP' | 'PAUSE';
export const STOP_STATUSES: readonly StopStatus[] = ['CLEAR', 'STOP', 'PAUSE'];

export interface StopState {
  readonly status: StopStatus;
  readonly timestamp?: string;
  readonly reason?: string;
  readonly by?: string;
}

export type StopParse =
  | { readonly ok: true; readonly state: StopState; readonly warnings: readonly string[] }
  | { readonly ok: false; readonly error: string };

/**
 * How much of STOP_ALL its status is read from: the first word must lie in its first 4 KiB. The
 * fallback registered for machines without the guardian reads as much (`head -c 4096`), so that
 * both see the same bytes.
 */
export const STOP_WORD_BYTES = 4096;

/**
 * The one grammar of STOP_ALL's status, byte for byte the same as the fallback's shell pipeline
 * (`src/agents/hookSettings.ts`, `STOP_WORD_PIPELINE`), so that a file means one thing with the
 * guardian and without it (docs/formats.md, "STOP_ALL"). Of the file's first 4 KiB:
 * 1. NUL bytes are removed (UTF-16, what Windows PowerShell 5.1's `echo STOP > file` writes, is
 *    then its ASCII text);
 * 2. tab, line feed, vertical tab, form feed, carriage return, and the bytes of a byte-order mark
 *    (EF BB BF, FE FF) and of a non-breaking space (C2 A0) are blanks;
 * 3. the status is the first word: after any blanks, `STOP`, `CLEAR` or `PAUSE` in any case,
 *    followed by anything but an ASCII letter, or by the end (`STOP: reason` and `Stop.` are STOP;
 *    `STOPPED` is no status).
 * Undefined: no status (an empty, blank or garbled file).
 */
export function stopWordOf(bytes: Uint8Array): { readonly status: StopStatus } | { readonly word: string } | undefined {
  const kept: number[] = [];
  for (const b of bytes.subarray(0, STOP_WORD_BYTES)) {
    if (b === 0) continue;
    kept.push(BLANK_BYTES.has(b) ? 0x20 : b);
  }
  let i = 0;
  while (kept[i] === 0x20) i++;
  if (i === kept.length) return undefined;
  let end = i;
  while (end < kept.length && isAsciiLetter(kept[end] as number)) end++;
  const word = String.fromCharCode(...kept.slice(i, end)).toUpperCase();
  if ((STOP_STATUSES as readonly string[]).includes(word)) return { status: word as StopStatus };
  // What the error names: the first word as far as the next blank, at most 40 bytes of it.
  let garbled = i;
  while (garbled < kept.length && garbled - i < 40 && kept[garbled] !== 0x20) garbled++;
  return { word: new TextDecoder('utf-8').decode(Uint8Array.from(kept.slice(i, garbled))) };
}

/** 2. above: the bytes read as blanks (\t \n \v \f \r, a BOM's EF BB BF FE FF, a non-breaking space's C2 A0). */
const BLANK_BYTES: ReadonlySet<number> = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0xef, 0xbb, 0xbf, 0xfe, 0xff, 0xc2, 0xa0]);

function isAsciiLetter(b: number): boolean {
  return (b >= 0x41 && b <= 0x5a) || (b >= 0x61 && b <= 0x7a);
}

/** The file's text: UTF-16 where a UTF-16 byte-order mark says so, else UTF-8 (its BOM dropped). */
export function stopAllText(bytes: Uint8Array): string {
  const [a, b] = bytes;
  const encoding = a === 0xff && b === 0xfe ? 'utf-16le' : a === 0xfe && b === 0xff ? 'utf-16be' : 'utf-8';
  return new TextDecoder(encoding).decode(bytes).replace(/\0/g, '');
}

/**
 * Reads the file; missing or blank means CLEAR. The status is `stopWordOf`'s; the rest of its line
 * (after a `:` or `.`, blanks) is a timestamp, and the lines after it `reason:` and `by:` lines.
 * Text is taken as UTF-8 (tests, the editor); `parseStopAllBytes` reads the file's bytes.
 */
export function parseStopAll(text: string | undefined): StopParse {
  return parseStopAllBytes(text === undefined ? undefined : new TextEncoder().encode(text));
}

export function parseStopAllBytes(bytes: Uint8Array | undefined): StopParse {
  if (bytes === undefined) return { ok: true, state: { status: 'CLEAR' }, warnings: [] };
  const found = stopWordOf(bytes);
  if (found === undefined) return { ok: true, state: { status: 'CLEAR' }, warnings: [] };
  if (!('status' in found)) return { ok: false, error: `line 1: status ${JSON.stringify(found.word)} is not one of ${STOP_STATUSES.join(', ')}` };
  const status = found.status;
  // The status's line, in the text: the first with a character that is not blank.
  const lines = stopAllText(bytes).split(/\r\n|[\n\r\v\f]/);
  const at = lines.findIndex((line) => /[^\s\uFEFF]/.test(line));
  const first = (lines[at] ?? '').replace(/^[\s\uFEFF]+/, '');
  // After the word: an optional `:` or `.`, then the timestamp.
  const [timestamp, ...rest] = first.slice(status.length).replace(/^[:.]?\s*/, '').split(/\s+/).filter((t) => t !== '');
  const warnings: string[] = [];
  if (timestamp === undefined) warnings.push('line 1: no timestamp after the status');
  else if (Number.isNaN(Date.parse(timestamp))) warnings.push(`line 1: ${JSON.stringify(timestamp)} is not an ISO 8601 timestamp`);
  if (rest.length > 0) warnings.push('line 1: text after the timestamp is ignored');
  let reason: string | undefined;
  let by: string | undefined;
  for (const line of lines.slice(at + 1)) {
    // The value's leading blanks are trimmed after the match: `:\s*(.*)$` backtracks
    // quadratically on a long run of blanks before a character `.` does not match.
    const m = /^\s*(reason|by)\s*:(.*)$/i.exec(line);
    if (m?.[1]?.toLowerCase() === 'reason') reason = m[2]?.trimStart();
    else if (m?.[1]?.toLowerCase() === 'by') by = m[2]?.trimStart();
  }
  return {
    ok: true,
    state: {
      status,
      ...(timestamp !== undefined ? { timestamp } : {}),
      ...(reason !== undefined ? { reason } : {}),
      ...(by !== undefined ? { by } : {}),
    },
    warnings,
  };
}

export function formatStopAll(state: StopState): string {
  const lines = [`${state.status} ${state.timestamp ?? new Date().toISOString()}`];
  if (state.reason !== undefined && state.reason !== '') lines.push(`reason: ${state.reason.replace(/\s+/g, ' ')}`);
  if (state.by !== undefined && state.by !== '') lines.push(`by: ${state.by.replace(/\s+/g, ' ')}`);
  return `${lines.join('\n')}\n`;
}
