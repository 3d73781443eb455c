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
 * Reads the file's text; missing or blank means CLEAR. Status words are accepted in any case, after
 * a byte-order mark and blank lines: an editor's BOM must not turn a STOP into a garbled file.
 */
export function parseStopAll(text: string | undefined): StopParse {
  if (text === undefined || text.trim() === '') return { ok: true, state: { status: 'CLEAR' }, warnings: [] };
  const lines = text.replace(/^\uFEFF/, '').replace(/^(?:[ \t]*\r?\n)+/, '').split(/\r?\n/);
  const first = (lines[0] ?? '').trim();
  const [word = '', timestamp, ...rest] = first.split(/\s+/);
  const status = word.toUpperCase();
  if (!(STOP_STATUSES as readonly string[]).includes(status)) {
    return { ok: false, error: `line 1: status ${JSON.stringify(word)} is not one of ${STOP_STATUSES.join(', ')}` };
  }
  const warnings: string[] = [];
  if (timestamp === undefined) warnings.push('line 1: no timestamp after the status');
  else if (Number.isNaN(Date.parse(timestamp))) warnings.push(`line 1: ${JSON.stringify(timestamp)} is not an ISO 8601 timestamp`);
  if (rest.length > 0) warnings.push('line 1: text after the timestamp is ignored');
  let reason: string | undefined;
  let by: string | undefined;
  for (const line of lines.slice(1)) {
    // The value's leading blanks are trimmed after the match: `:\s*(.*)$` backtracks
    // quadratically on a long run of blanks before a character `.` does not match.
    const m = /^\s*(reason|by)\s*:(.*)$/i.exec(line);
    if (m?.[1]?.toLowerCase() === 'reason') reason = m[2]?.trimStart();
    else if (m?.[1]?.toLowerCase() === 'by') by = m[2]?.trimStart();
  }
  return {
    ok: true,
    state: {
      status: status as StopStatus,
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
