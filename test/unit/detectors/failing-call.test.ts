import * as assert from 'node:assert/strict';
import { Canonicalizer } from '../../../src/core/canonical';
import { reduceHash } from '../../../src/core/calls';
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

  it('counts identical failures when the calls between them are ones the session already made (the same read, round after round)', () => {
    const other = { type: 'tool', session: 's', tool: 'ls', args: {}, ok: true, output: 'a' };
    assert.equal(only(run([call('Permission denied'), other, call('Permission denied'), other, call('Permission denied')]).findings, 'failing-call').length, 1);
    assert.equal(only(run([call('Permission denied'), call('Permission denied')]).findings, 'failing-call').length, 1);
  });

  it('a re-run after something new was tried is a new attempt (issue 25: edit, build, edit, build, its error the same or changing)', () => {
    const edit = (n: number) => ({ type: 'tool', session: 's', tool: 'edit', args: { path: 'a.ts', text: `v${n}` }, ok: true, output: 'edited' });
    const build = { type: 'tool', session: 's', tool: 'bash', args: { command: 'pnpm run build' }, ok: false, error: 'ReferenceError: window is not defined' };
    assert.equal(only(run([build, edit(1), build, edit(2), build, edit(3), build]).findings, 'failing-call').length, 0);
    // The same edit again changes nothing: from then on the failures count (an unknown error: two retries, then the breaker).
    assert.equal(only(run([build, edit(1), build, edit(1), build, edit(1), build]).findings, 'failing-call').length, 1);
    assert.equal(only(run([build, edit(1), build, edit(1), build]).findings, 'failing-call').length, 0);
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

  it('with no retries allowed, trips on the first failure, and its evidence grows with each after it', () => {
    const cfg = config({ signals: { 'failing-call': { retries: { deterministic: 0 } } } });
    const { findings, engine } = run(times(3, () => call('ENOENT: no such file or directory')), cfg);
    assert.deepEqual(only(findings, 'failing-call').map((f) => [f.count, f.threshold, f.evidence.map((r) => r.event)]), [[1, 1, [1]]]);
    assert.deepEqual(only(engine.active(), 'failing-call').map((f) => [f.count, f.evidence.map((r) => r.event)]), [[3, [1, 2, 3]]]);
  });

  it("counts one call's error kinds apart, each with its own evidence, however they interleave", () => {
    const events = [call('HTTP 429 Too Many Requests'), call('ENOENT: no such file'), call('HTTP 429 Too Many Requests'), call('Permission denied'), call('ENOENT: no such file')];
    const { findings, engine } = run(events);
    const found = only(findings, 'failing-call');
    assert.deepEqual(found.map((f) => [f.details?.error_class, f.count, f.evidence.map((r) => r.event)]), [['file_not_found', 2, [2, 5]]]);
    assert.equal(only(engine.active(), 'failing-call').length, 1);
    // Two more 429s: the transient kind trips on its 4th, its evidence its own.
    const more = run([...events, call('HTTP 429 Too Many Requests'), call('HTTP 429 Too Many Requests')]);
    const transient = only(more.findings, 'failing-call').filter((f) => f.details?.error_class !== 'file_not_found');
    assert.deepEqual(transient.map((f) => [f.count, f.evidence.map((r) => r.event)]), [[4, [1, 3, 6, 7]]]);
  });

  it('a new attempt ends the episodes of every kind the call failed with, and counts from its own failure', () => {
    const edit = { type: 'tool', session: 's', tool: 'edit', args: { path: 'a.ts', text: 'v2' }, ok: true, output: 'edited' };
    const events = [call('HTTP 429'), call('ENOENT: no such file'), call('ENOENT: no such file'), call('HTTP 429'), call('HTTP 429'), call('HTTP 429')];
    const before = run(events);
    assert.equal(only(before.engine.active(), 'failing-call').length, 2);
    const after = run([...events, edit, call('ENOENT: no such file')]);
    assert.equal(only(after.engine.active(), 'failing-call').length, 0);
    // Counted from the failure after the edit: one more is a loop again, its evidence from there.
    const again = only(run([...events, edit, call('ENOENT: no such file'), call('ENOENT: no such file')]).findings, 'failing-call');
    assert.deepEqual(again.slice(2).map((f) => [f.count, f.evidence.map((r) => r.event)]), [[2, [8, 9]]]);
    // Every kind counts from there: three 429s before the edit and one after are not four.
    const kinds = [call('ENOENT: no such file'), call('HTTP 429'), call('HTTP 429'), call('HTTP 429'), edit, call('ENOENT: no such file'), call('HTTP 429')];
    assert.equal(only(run(kinds).findings, 'failing-call').length, 0);
    assert.equal(only(run(kinds.filter((e) => e !== edit)).findings, 'failing-call').length, 2);
  });

  describe('two calls whose signature hashes collide', () => {
    // Found by trying paths src/f0.ts, src/f1.ts…: different calls, one hash (checked below).
    const a = { path: 'src/f34004.ts' };
    const b = { path: 'src/f41493.ts' };
    const fail = (args: object, error = 'ENOENT: no such file or directory') => ({ type: 'tool', session: 's', tool: 'read_file', args, error });

    it('have the same hash', () => {
      const canon = new Canonicalizer(config().volatileKeys, config().volatileArgs);
      assert.equal(reduceHash(canon.signatureHash('read_file', a)), reduceHash(canon.signatureHash('read_file', b)));
    });

    it('are kept apart: one failure each is no loop; each trips on its own second failure', () => {
      assert.deepEqual(only(run([fail(a), fail(b)]).findings, 'failing-call'), []);
      const found = only(run([fail(a), fail(b), fail(b), fail(a)]).findings, 'failing-call');
      assert.deepEqual(found.map((f) => [f.details?.args, f.count, f.evidence]), [
        ['{"path":"src/f41493.ts"}', 2, [{ file: 'log.jsonl', event: 2, line: 2 }, { file: 'log.jsonl', event: 3, line: 3 }]],
        ['{"path":"src/f34004.ts"}', 2, [{ file: 'log.jsonl', event: 1, line: 1 }, { file: 'log.jsonl', event: 4, line: 4 }]],
      ]);
    });

    it('a success of one clears its failures only', () => {
      const ok = { type: 'tool', session: 's', tool: 'read_file', args: a, ok: true, output: 'found' };
      const found = only(run([fail(a), fail(b), ok, fail(a), fail(b)]).findings, 'failing-call');
      assert.deepEqual(found.map((f) => f.details?.args), ['{"path":"src/f41493.ts"}']);
    });

    it('are pruned one by one when their failures are older than the window', () => {
      const at = (args: object, ts: string) => ({ ...fail(args), ts });
      // b failed at 10:00 only, a at 10:00 and 11:30: at 12:30 b's failure is past the window, a's is not.
      const events = [at(a, '2026-01-01T10:00:00Z'), at(b, '2026-01-01T10:00:01Z'), at(a, '2026-01-01T11:30:00Z'), at(b, '2026-01-01T12:30:00Z')];
      const found = only(run(events).findings, 'failing-call');
      assert.deepEqual(found.map((f) => [f.details?.args, f.count]), [['{"path":"src/f34004.ts"}', 2]]);
    });
  });
});
