import { strict as assert } from 'node:assert';
import { EXIT } from '../../../src/cli/io';
import { cli, tmpdir, write } from '../helpers';

describe('replay never succeeds silently on what it cannot read', () => {
  it('a non-empty file from which no event could be read exits 5, naming the file, the format and what it expected', async () => {
    const dir = await tmpdir();
    const file = await write(dir, 'mystery.jsonl', '{"kind":"note","text":"a"}\n{"kind":"note","text":"b"}\n');
    const r = await cli(['replay', file]);
    assert.equal(r.code, EXIT.nothingRead);
    assert.equal(EXIT.nothingRead, 5);
    assert.match(r.stderr, /mystery\.jsonl: nothing could be read: recognised as events, expecting the guardian's v1 event log/);
    assert.match(r.stderr, /--format \(invocations, claude, codex/);
    assert.match(r.stderr, /warning: skipped 2 record\(s\) with type: missing event type/);
  });

  it('--json carries the error and the skipped kinds; the exit code is 5', async () => {
    const dir = await tmpdir();
    const file = await write(dir, 'x.jsonl', '{"v":1,"type":"nope"}\n');
    const r = await cli(['replay', file, '--json']);
    assert.equal(r.code, 5);
    const out = JSON.parse(r.stdout) as { events: number; error: string; skipped_kinds: { count: number }[] };
    assert.equal(out.events, 0);
    assert.match(out.error, /x\.jsonl: nothing could be read/);
    assert.equal(out.skipped_kinds[0]?.count, 1);
  });

  it('an explicit --format that reads nothing says so too', async () => {
    const dir = await tmpdir();
    const file = await write(dir, 'chat.jsonl', '{"v":1,"type":"user","session":"s"}\n');
    const r = await cli(['replay', file, '--format', 'codex']);
    assert.equal(r.code, 5);
    assert.match(r.stderr, /read as --format codex, expecting a Codex/);
  });

  it('an empty or blank file is not an error: nothing to read', async () => {
    const dir = await tmpdir();
    for (const text of ['', '\n  \n']) {
      const file = await write(dir, 'empty.jsonl', text);
      const r = await cli(['replay', file]);
      assert.equal(r.code, EXIT.ok, r.stderr);
      assert.doesNotMatch(r.stderr, /nothing could be read/);
    }
  });

  it('stdin that holds records but no event exits 5 too', async () => {
    const r = await cli(['replay', '-'], { input: '{"hello":1}\n' });
    assert.equal(r.code, 5);
    assert.match(r.stderr, /^loop-guardian replay: error: -: nothing could be read/m);
  });

  it('unknown record types are counted by type in the summary', async () => {
    const dir = await tmpdir();
    const lines = [{ v: 1, type: 'user', session: 's' }, ...Array.from({ length: 3 }, () => ({ timestamp: '2025-01-01T00:00:00Z', type: 'frobnicate', payload: {} }))];
    const file = await write(dir, 'rollout.jsonl', [{ timestamp: '2025-01-01T00:00:00Z', type: 'session_meta', payload: { id: 's' } }, { timestamp: '2025-01-01T00:00:00Z', type: 'event_msg', payload: { type: 'user_message', message: 'hi' } }, ...lines.slice(1)].map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await cli(['replay', file]);
    assert.equal(r.code, EXIT.ok, r.stderr);
    assert.match(r.stderr, /warning: skipped 3 record\(s\) with type: unknown record type "frobnicate"/);
  });
});

describe('scan names the logs nothing could be read from', () => {
  it('a log whose every line is skipped is named on stderr and in --json; a readable or blank log is not', async () => {
    const ws = await tmpdir();
    await write(ws, '.tmp/a/logs/good.jsonl', '{"v":1,"type":"user","session":"s"}\n');
    await write(ws, '.tmp/a/logs/codex-rollout.jsonl', '{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}\n{"timestamp":"2025-01-01T00:00:01Z","type":"response_item","payload":{"type":"message"}}\n');
    await write(ws, '.tmp/a/logs/blank.jsonl', '\n');
    const r = await cli(['scan', '--workspace', ws]);
    assert.equal(r.code, EXIT.ok);
    assert.match(r.stderr, /warning: \.tmp\/a\/logs\/codex-rollout\.jsonl: nothing could be read: 2 line\(s\) skipped, 0 events; it was read as the guardian's v1 event log/);
    assert.doesNotMatch(r.stderr, /good\.jsonl|blank\.jsonl/);
    const json = JSON.parse((await cli(['scan', '--workspace', ws, '--json'])).stdout) as { unread: { file: string; skipped: number; read_as: string }[] };
    assert.deepEqual(json.unread.map((u) => [u.file, u.skipped]), [['.tmp/a/logs/codex-rollout.jsonl', 2]]);
    assert.match(json.unread[0]?.read_as ?? '', /v1 event log/);
  });
});
