import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PATHS } from '../../src/state/workspace';
import { LogTail } from '../../src/watch/logTail';
import { cli, jsonl, tmpdir, write } from '../unit/helpers';

/** Three identical calls: an active identical-calls halt. */
const HALT = jsonl([1, 2, 3].map(() => ({ type: 'tool', session: 's', tool: 'ls', args: { d: '.' }, ok: true, output: 'a.ts' })));

interface ScanJson {
  files: string[];
  skipped_lines: { file: string; field: string; reason: string }[];
  findings: { signal: string; active: boolean; file: string }[];
}

describe('reliability: reading logs (issue 12, guarantees 2, 3 and 5)', function () {
  this.timeout(60_000);
  let ws: string;
  beforeEach(async () => {
    ws = await tmpdir('lg-watch-');
  });

  describe('the incremental tail', () => {
    it('sees a copytruncate that regrows past the old offset before the next read', async () => {
      const file = await write(ws, 'log.jsonl', jsonl([1, 2, 3].map((i) => ({ type: 'output', text: `old ${i}` }))));
      const tail = new LogTail(file);
      const lines: string[] = [];
      await tail.read((t) => lines.push(t));
      assert.equal(lines.length, 3);
      // copytruncate: the file is emptied in place (same inode), then the agent writes more than before.
      await fs.truncate(file, 0);
      await fs.appendFile(file, jsonl([1, 2, 3, 4, 5].map((i) => ({ type: 'output', text: `new ${i}` }))));
      lines.length = 0;
      let reset = false;
      const read = await tail.read(
        (t) => lines.push(t),
        undefined,
        () => (reset = true),
      );
      assert.equal(read.reset, true);
      assert.equal(reset, true);
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as { text: string }).text), ['new 1', 'new 2', 'new 3', 'new 4', 'new 5']);
    });

    it('still reads plain appends incrementally (no false reset)', async () => {
      const file = await write(ws, 'log.jsonl', jsonl([{ type: 'output', text: 'a' }]));
      const tail = new LogTail(file);
      await tail.read(() => undefined);
      await fs.appendFile(file, jsonl([{ type: 'output', text: 'b' }]));
      const lines: string[] = [];
      const read = await tail.read((t) => lines.push(t));
      assert.equal(read.reset, false);
      assert.equal(lines.length, 1);
    });
  });

  describe('files that are not regular or cannot be read', () => {
    it('scan skips a log linking to a FIFO, names it, and still reports the halt in the other log', async () => {
      const fifo = path.join(ws, 'fifo');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      await write(ws, '.tmp/current/logs/b.jsonl', HALT);
      await fs.symlink(fifo, path.join(ws, '.tmp/current/logs/a.jsonl'));
      const r = await cli(['scan', '--workspace', ws, '--json'], { timeoutMs: 10_000 });
      assert.equal(r.timedOut, false, `scan hung (${r.ms} ms)`);
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as ScanJson;
      assert.ok(out.findings.some((f) => f.signal === 'identical-calls' && f.active && f.file === '.tmp/current/logs/b.jsonl'));
      assert.ok(out.skipped_lines.some((s) => s.file === '.tmp/current/logs/a.jsonl' && /FIFO/.test(s.reason)), JSON.stringify(out.skipped_lines));
    });

    it('scan skips logs that cannot be opened (a link loop, a folder) and goes on', async () => {
      await write(ws, '.tmp/current/logs/b.jsonl', HALT);
      await fs.symlink('loop.jsonl', path.join(ws, '.tmp/current/logs/loop.jsonl'));
      await fs.mkdir(path.join(ws, '.tmp/dir-target'));
      await fs.symlink(path.join(ws, '.tmp/dir-target'), path.join(ws, '.tmp/current/logs/dir.jsonl'));
      const r = await cli(['scan', '--workspace', ws, '--json'], { timeoutMs: 10_000 });
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as ScanJson;
      assert.ok(out.findings.some((f) => f.signal === 'identical-calls' && f.active));
      const skippedFiles = out.skipped_lines.filter((s) => s.field === '(file)').map((s) => s.file).sort();
      assert.deepEqual(skippedFiles, ['.tmp/current/logs/dir.jsonl', '.tmp/current/logs/loop.jsonl']);
      const human = await cli(['scan', '--workspace', ws], { timeoutMs: 10_000 });
      assert.match(human.stdout, /skipped \.tmp\/current\/logs\/loop\.jsonl:.*cannot open/);
    });

    it('replay of a path that links to a FIFO does not hang: refused with exit 3, naming the file', async () => {
      const fifo = path.join(ws, 'fifo');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      await fs.symlink(fifo, path.join(ws, 'log.jsonl'));
      for (const format of ['auto', 'events', 'claude']) {
        const r = await cli(['replay', 'log.jsonl', '--format', format, '--workspace', ws], { cwd: ws, timeoutMs: 10_000 });
        assert.equal(r.timedOut, false, `replay --format ${format} hung`);
        assert.equal(r.code, 3);
        assert.match(r.stderr, /log\.jsonl: nothing to read \(a FIFO that nothing wrote to\)/);
      }
    });
  });

  describe('event globs', () => {
    it('a glob reaching outside the workspace is refused and reported; nothing outside is read', async () => {
      const parent = await tmpdir('lg-parent-');
      const inner = path.join(parent, 'a', 'ws');
      await write(parent, 'secret/outside.jsonl', HALT);
      await write(inner, '.tmp/current/logs/in.jsonl', jsonl([{ type: 'output', text: 'fine' }]));
      await write(inner, PATHS.config, JSON.stringify({ sources: { events: ['../../**/*.jsonl', '.tmp/**/logs/*.jsonl', '/etc/*.jsonl'] } }));
      const r = await cli(['scan', '--workspace', inner, '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 0, r.stdout);
      const out = JSON.parse(r.stdout) as ScanJson;
      // The invocation history is a log read only where there is one (there is none here).
      assert.deepEqual(out.files, ['.tmp/current/logs/in.jsonl']);
      assert.deepEqual(out.findings, []);
      const refused = out.skipped_lines.filter((s) => s.field.startsWith('sources.events')).map((s) => s.reason);
      assert.equal(refused.length, 2, JSON.stringify(out.skipped_lines));
      assert.match(refused[0] as string, /"\.\.\/\.\.\/\*\*\/\*\.jsonl" reaches outside the workspace/);
      assert.match(refused[1] as string, /"\/etc\/\*\.jsonl" reaches outside the workspace/);
    });

    it('a folder inside the workspace linking outside is not followed; a file linking outside is skipped and reported', async () => {
      const outside = await tmpdir('lg-outside-');
      await write(outside, 'logs/x.jsonl', HALT);
      await fs.mkdir(path.join(ws, '.tmp/current/logs'), { recursive: true });
      await fs.symlink(path.join(outside, 'logs/x.jsonl'), path.join(ws, '.tmp/current/logs/x.jsonl'));
      await fs.symlink(path.join(outside, 'logs'), path.join(ws, '.tmp/linked'));
      await write(ws, PATHS.config, JSON.stringify({ sources: { events: ['.tmp/**/*.jsonl'] } }));
      const r = await cli(['scan', '--workspace', ws, '--json'], { timeoutMs: 20_000 });
      assert.equal(r.code, 0, r.stdout);
      const out = JSON.parse(r.stdout) as ScanJson;
      assert.deepEqual(out.findings, []);
      assert.ok(out.skipped_lines.some((s) => s.file === '.tmp/current/logs/x.jsonl' && /outside the workspace/.test(s.reason)), JSON.stringify(out.skipped_lines));
    });
  });
});
