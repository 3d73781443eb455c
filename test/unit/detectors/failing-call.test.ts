import * as assert from 'node:assert/strict';
import { config, only, run, times } from '../helpers';

const call = (error: string, extra: Record<string, unknown> = {}) => ({ type: 'tool', session: 's', tool: 'read_file', args: { path: 'missing.txt' }, error, ...extra });

describe('failing-call (seed 004)', () => {
  it('trips on the 2nd identical deterministic failure', () => {
    const found = only(run(times(2, () => call('ENOENT: no such file or directory'))).findings, 'failing-call');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.count, 2);
    assert.equal(found[0]?.threshold, 2);
    assert.equal(found[0]?.details?.error_class, 'file_not_found');
    assert.equal(found[0]?.details?.family, 'deterministic');
  });

  it('gives transient errors 3 retries: it trips on the 4th failure', () => {
    const events = times(4, () => call('HTTP 429 Too Many Requests'));
    const found = only(run(events).findings, 'failing-call');
    assert.deepEqual(found.map((f) => [f.count, f.threshold]), [[4, 4]]);
    assert.equal(only(run(events.slice(0, 3)).findings, 'failing-call').length, 0);
  });

  it('gives unknown errors 2 retries', () => {
    assert.equal(only(run(times(2, () => call('the thing broke'))).findings, 'failing-call').length, 0);
    assert.equal(only(run(times(3, () => call('the thing broke'))).findings, 'failing-call').length, 1);
  });

  it('counts identical failures even when other calls come between', () => {
    const other = { type: 'tool', session: 's', tool: 'ls', args: {}, ok: true, output: 'a' };
    assert.equal(only(run([call('Permission denied'), other, call('Permission denied')]).findings, 'failing-call').length, 1);
  });

  it('keeps different arguments and different error classes apart', () => {
    const events = [call('Permission denied'), call('Permission denied', { args: { path: 'other.txt' } }), call('Request timed out')];
    assert.equal(only(run(events).findings, 'failing-call').length, 0);
  });

  it('forgets failures after a success of the same call', () => {
    const ok = { type: 'tool', session: 's', tool: 'read_file', args: { path: 'missing.txt' }, ok: true, output: 'now it exists' };
    assert.equal(only(run([call('ENOENT'), ok, call('ENOENT')]).findings, 'failing-call').length, 0);
  });

  it('prunes failures older than the window', () => {
    const at = (iso: string) => call('ENOENT: no such file', { ts: iso });
    assert.equal(only(run([at('2026-01-01T10:00:00Z'), at('2026-01-01T12:30:00Z')]).findings, 'failing-call').length, 0);
    assert.equal(only(run([at('2026-01-01T10:00:00Z'), at('2026-01-01T11:30:00Z')]).findings, 'failing-call').length, 1);
  });

  it('reports first and last timestamps and takes its budgets from the config', () => {
    const events = times(3, (i) => call('ValidationError: path must be a string', { ts: `2026-01-01T10:0${i}:00Z` }));
    const found = only(run(events, config({ signals: { 'failing-call': { retries: { deterministic: 2 } } } })).findings, 'failing-call');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.details?.first_ts, '2026-01-01T10:00:00.000Z');
    assert.equal(found[0]?.details?.last_ts, '2026-01-01T10:02:00.000Z');
  });
});
