import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ROOT, runHook, tmpdir, tmpProject } from '../helpers';

/**
 * The hook's stdin read through libuv's handle (src/cli/stdinHandle.ts), in real processes with a
 * real socket as stdin (what `spawn`'s `stdio: 'pipe'` gives a child, as agents on Node do).
 */

interface Read {
  readonly socket: boolean;
  readonly text?: string;
  readonly error?: string;
  /** Whether Node's `net` was loaded by the end: the stream path loads it, the handle does not. */
  readonly net: boolean;
}

/**
 * A process that reads its stdin with the hook's `readStdin` and reports it on fd 1 (not through
 * `process.stdout`, which would load `net` itself). `parts` are written `pauseMs` apart; with
 * `keepOpen` stdin never ends and the child exits on its own after `exitAfterMs`.
 */
async function readInChild(parts: readonly Buffer[], opts: { pauseMs?: number; env?: NodeJS.ProcessEnv; streamOnly?: boolean; keepOpen?: boolean; exitAfterMs?: number; nodeArgs?: readonly string[]; preamble?: string } = {}): Promise<{ read?: Read; stderr: string; code: number | null; ms: number }> {
  const dir = await tmpdir('lg-stdin-');
  const script = path.join(dir, 'read.js');
  const hook = path.join(ROOT, 'out', 'src', 'cli', 'hook.js');
  await fs.writeFile(
    script,
    `${opts.preamble ?? ''}
const { fstatSync, writeSync } = require('node:fs');
const { readStdin } = require(${JSON.stringify(hook)});
const socket = fstatSync(0).isSocket();
const report = (r) => writeSync(1, JSON.stringify({ socket, ...r, net: process.moduleLoadList.includes('NativeModule net') }));
readStdin({ streamOnly: ${String(opts.streamOnly === true)} }).then((text) => report({ text }), (err) => report({ error: err.message }));
${opts.exitAfterMs !== undefined ? `setTimeout(() => process.exit(0), ${opts.exitAfterMs});` : ''}
`,
  );
  const t0 = Date.now();
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), script], { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...opts.env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdin.on('error', () => undefined);
  for (const p of parts) {
    child.stdin.write(p);
    if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
  }
  if (!opts.keepOpen) child.stdin.end();
  const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const code = await exited;
  clearTimeout(killer);
  child.stdin.destroy();
  return { ...(stdout !== '' ? { read: JSON.parse(stdout) as Read } : {}), stderr, code, ms: Date.now() - t0 };
}

describe('the hook reads a socket stdin through libuv\'s handle, without net (a real process)', () => {
  const text = `{"session_id":"s","tool_input":{"command":"echo héllo wörld ✓ 𝄞"},"pad":"${'x'.repeat(200_000)}"}`;
  const bytes = Buffer.from(text, 'utf8');

  it('every byte in order, written in parts with pauses, a multi-byte character split between two parts; net never loaded', async () => {
    const split = bytes.indexOf(Buffer.from('✓')) + 1;
    const parts = [bytes.subarray(0, 7), bytes.subarray(7, split), bytes.subarray(split, 150_000), bytes.subarray(150_000)];
    const r = await readInChild(parts, { pauseMs: 30 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.read?.socket, true, 'stdin was a socket, as an agent on Node gives it');
    assert.equal(r.read?.error, undefined);
    assert.equal(r.read?.text, text);
    assert.equal(r.read?.net, false, 'read without Node\'s net module');
    assert.equal(r.stderr, '');
  });

  it('an empty stdin that ends is the empty text', async () => {
    const r = await readInChild([]);
    assert.deepEqual({ text: r.read?.text, net: r.read?.net }, { text: '', net: false });
  });

  it('past 16 MB it refuses, naming the limit, and does not hold more', async () => {
    const r = await readInChild([Buffer.alloc(8 << 20, 0x20), Buffer.alloc(8 << 20, 0x20), Buffer.from(' ')]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.read?.text, undefined);
    assert.match(r.read?.error ?? '', /stdin: more than 16777216 bytes/);
  });

  it('a stdin that never ends keeps nothing waiting: the process exits when it is done', async () => {
    const r = await readInChild([Buffer.from('{"session_id":')], { keepOpen: true, exitAfterMs: 300 });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.read, undefined, 'nothing was read to an end');
    assert.ok(r.ms < 10_000, `took ${r.ms} ms`);
  });

  // Where process.binding would warn or throw, and where the caller asks for the public stream:
  // the same text through process.stdin, and no warning on stderr.
  for (const [name, opts] of [
    ['NODE_PENDING_DEPRECATION=1', { env: { NODE_PENDING_DEPRECATION: '1' } }],
    ['--pending-deprecation', { nodeArgs: ['--pending-deprecation'] }],
    ['--throw-deprecation --pending-deprecation', { nodeArgs: ['--throw-deprecation', '--pending-deprecation'] }],
    ['streamOnly', { streamOnly: true }],
    // Electron run as Node: the launcher's last resort, whose Node is patched and was not checked.
    ['Electron', { preamble: "Object.defineProperty(process.versions, 'electron', { value: '35.0.0' });" }],
  ] as const) {
    it(`${name}: through process.stdin instead, the same text, nothing on stderr`, async () => {
      const r = await readInChild([bytes.subarray(0, 1000), bytes.subarray(1000)], { pauseMs: 20, ...opts });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.read?.text, text);
      assert.equal(r.read?.net, true, 'the stream path (it loads net)');
      assert.equal(r.stderr, '');
    });
  }

  // libuv aborts the process when asked to poll what is not a socket or a pipe: such a stdin is
  // never taken (a closed stdin is /dev/null to Node, a device).
  for (const [name, redirect] of [
    ['a file', '< "$0"'],
    ['a closed stdin (/dev/null to Node)', '<&-'],
  ] as const) {
    it(`${name}: not taken, nothing read, the process goes on`, async () => {
      const dir = await tmpdir('lg-stdin-');
      const script = path.join(dir, 'probe.js');
      const module = path.join(ROOT, 'out', 'src', 'cli', 'stdinHandle.js');
      await fs.writeFile(script, `const r = require(${JSON.stringify(module)}).readStdinByHandle(1000, () => new Error('big'));\nsetTimeout(() => require('node:fs').writeSync(1, r === undefined ? 'not taken' : 'taken'), 20);\n`);
      const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn('sh', ['-c', `exec "$1" "$0" ${redirect}`, script, process.execPath], { stdio: ['ignore', 'pipe', 'pipe'] });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('close', (code) => resolve({ code, out }));
      });
      assert.deepEqual(r, { code: 0, out: 'not taken' });
    });
  }

  it('the hook itself: a call on a socket is recorded, and a STOP known before stdin refuses it', async () => {
    const ws = await tmpProject();
    const call = { session_id: 'S', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls ✓' }, tool_use_id: 't1' };
    const allowed = await runHook(ws, 'claude', call);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal(allowed.stdout, '');
    const log = await fs.readFile(path.join(ws, '.tmp', 'current', 'logs', 'hook-claude-S.jsonl'), 'utf8');
    assert.match(log, /"command":"ls ✓"/);
    await fs.mkdir(path.join(ws, '.github', 'guardian'), { recursive: true });
    await fs.writeFile(path.join(ws, '.github', 'guardian', 'STOP_ALL'), 'STOP 2026-11-25T00:00:00Z\n');
    const refused = await runHook(ws, 'claude', { ...call, tool_use_id: 't2' });
    assert.match(refused.stdout, /"permissionDecision":"deny"/);
  });
});
