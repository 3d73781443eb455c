import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, constants, openSync, promises as fs, writeSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { HOOK_AGENTS } from '../../src/agents';
import { runHook } from '../../src/cli/hook';
import { CLI, cli, refusedByStop, tmpdir, tmpProject, write, type CliRun } from '../unit/helpers';

/*
 * Guarantee 1, "STOP first": with STOP_ALL readable and saying STOP, the hook refuses the call
 * whatever else is broken, and always exits by its deadline. Each case here let calls through
 * before the hook read STOP_ALL first (issue 12's reproductions).
 */

const STOP = 'STOP 2026-11-23T10:00:00Z\nreason: runaway agent\nby: a person\n';

function pre(ws: string, id = 't1', command = 'ls') {
  return { session_id: 'S', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: id };
}

function hook(ws: string, input: unknown, opts: { agent?: string; args?: string[]; env?: NodeJS.ProcessEnv; cwd?: string } = {}): Promise<CliRun> {
  const args = ['hook', opts.agent ?? 'claude', ...(opts.args ?? ['--workspace', ws])];
  return cli(args, { input: typeof input === 'string' ? input : JSON.stringify(input), cwd: opts.cwd ?? ws, timeoutMs: 15_000, ...(opts.env ? { env: opts.env } : {}) });
}

async function stoppedWorkspace(): Promise<string> {
  const ws = await tmpdir('lg-stop-');
  await write(ws, '.github/guardian/STOP_ALL', STOP);
  return ws;
}

/** Runs `n` calls, `width` at a time; returns how many were allowed. */
async function allowedOf(n: number, width: number, call: (i: number) => Promise<CliRun>): Promise<{ allowed: number; runs: CliRun[] }> {
  const runs: CliRun[] = [];
  for (let i = 0; i < n; i += width) runs.push(...(await Promise.all(Array.from({ length: Math.min(width, n - i) }, (_, j) => call(i + j)))));
  return { allowed: runs.filter((r) => !refusedByStop(r)).length, runs };
}

/** Mounts a tmpfs (root only); false where this machine does not allow it. */
function mountTmpfs(dir: string, options: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('reliability: STOP first (the hook)', function () {
  this.timeout(120_000);

  it('refuses when .tmp/current/logs is a file', async () => {
    const ws = await stoppedWorkspace();
    await write(ws, '.tmp/current/logs', 'x\n');
    assert.ok(refusedByStop(await hook(ws, pre(ws))));
  });

  it('refuses when config.json is nested 5,000 deep', async () => {
    const ws = await stoppedWorkspace();
    await write(ws, '.github/guardian/config.json', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`);
    assert.ok(refusedByStop(await hook(ws, pre(ws))));
  });

  for (const [what, rel] of [
    ['the hook log', '.tmp/current/logs/hook-claude-S.jsonl'],
    ['config.json', '.github/guardian/config.json'],
    ['the configuration cache', '.tmp/guardian/hook-config.json'],
    ['the guardian log', '.tmp/guardian/guardian.log'],
  ] as const) {
    it(`refuses, and exits by its deadline, when ${what} is a FIFO`, async () => {
      const ws = await stoppedWorkspace();
      await fs.mkdir(path.dirname(path.join(ws, rel)), { recursive: true });
      execFileSync('mkfifo', [path.join(ws, rel)]);
      const r = await hook(ws, pre(ws));
      assert.equal(r.timedOut, false, `the hook hung (${r.ms} ms)`);
      assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
      assert.ok(refusedByStop(r), r.stdout + r.stderr);
    });
  }

  it('a FIFO in a state file never keeps the hook past its deadline when it allows either: a FIFO config.json is reported and the defaults apply', async () => {
    const ws = await tmpdir('lg-stop-');
    await fs.mkdir(path.join(ws, '.github/guardian'), { recursive: true });
    execFileSync('mkfifo', [path.join(ws, '.github/guardian/config.json')]);
    const r = await hook(ws, pre(ws));
    assert.equal(r.timedOut, false);
    assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8'), /config\.json.*not a regular file \(a FIFO\).*defaults used/);
    // The call was recorded: the hook went on with the default configuration.
    assert.match(await fs.readFile(path.join(ws, '.tmp/current/logs/hook-claude-S.jsonl'), 'utf8'), /"tool":"Bash"/);
  });

  it('refuses all 60 calls at 30-way concurrency while the session lock is held, and after its holder was killed (kill -9)', async () => {
    const ws = await stoppedWorkspace();
    const lock = path.join(ws, '.tmp/current/logs/hook-claude-S.jsonl.lock');
    await write(ws, path.relative(ws, lock), `${process.pid}\n`);
    const held = await allowedOf(60, 30, (i) => hook(ws, pre(ws, `h${i}`)));
    assert.equal(held.allowed, 0);
    const victim = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    await new Promise((r) => setTimeout(r, 100));
    await fs.writeFile(lock, `${victim.pid}\n`);
    victim.kill('SIGKILL');
    const orphaned = await allowedOf(60, 30, (i) => hook(ws, pre(ws, `k${i}`)));
    assert.equal(orphaned.allowed, 0);
  });

  it('refuses on a read-only workspace and on a full disk', async function () {
    const ro = await stoppedWorkspace();
    if (!mountTmpfs(ro, 'size=1m')) this.skip();
    try {
      await write(ro, '.github/guardian/STOP_ALL', STOP);
      execFileSync('mount', ['-o', 'remount,ro', ro]);
      assert.ok(refusedByStop(await hook(ro, pre(ro))));
    } finally {
      execFileSync('umount', [ro]);
    }
    const full = await stoppedWorkspace();
    assert.ok(mountTmpfs(full, 'size=64k'));
    try {
      await write(full, '.github/guardian/STOP_ALL', STOP);
      await fs.writeFile(path.join(full, 'filler'), Buffer.alloc(256 * 1024)).catch(() => undefined);
      assert.ok(refusedByStop(await hook(full, pre(full))));
    } finally {
      execFileSync('umount', [full]);
    }
  });

  it('PAUSE refuses delegations despite a foreign or garbled configuration cache', async () => {
    const a = await tmpdir('lg-stop-');
    await write(a, '.github/guardian/STOP_ALL', 'PAUSE 2026-11-23T10:00:00Z\n');
    const task = { ...pre(a), tool_name: 'Task', tool_input: { prompt: 'do it' } };
    assert.match((await hook(a, task)).stdout, /PAUSE/);
    // Another workspace's cache, copied in, that lets every tool through.
    const b = await tmpdir('lg-stop-');
    await write(b, '.github/guardian/STOP_ALL', 'PAUSE 2026-11-23T10:00:00Z\n');
    const cache = JSON.parse(await fs.readFile(path.join(a, '.tmp/guardian/hook-config.json'), 'utf8')) as { config: { hooks: { delegationTools: string[] } } };
    cache.config.hooks.delegationTools = ['nothing'];
    await write(b, '.tmp/guardian/hook-config.json', JSON.stringify(cache));
    assert.match((await hook(b, { ...task, cwd: b })).stdout, /PAUSE/);
    await write(b, '.tmp/guardian/hook-config.json', '{"v":1,"source":"x","config":{"hooks":{}}}');
    assert.match((await hook(b, { ...task, cwd: b })).stdout, /PAUSE/);
  });

  it('reads a STOP_ALL with a byte-order mark or leading blank lines as STOP', async () => {
    for (const text of [`\uFEFF${STOP}`, `\n\n${STOP}`, `stop 2026-11-23T10:00:00Z\n`]) {
      const ws = await tmpdir('lg-stop-');
      await write(ws, '.github/guardian/STOP_ALL', text);
      assert.ok(refusedByStop(await hook(ws, pre(ws))), JSON.stringify(text));
    }
  });

  it('cuts a 100 MB STOP reason to a readable length, and answers at once', async () => {
    const ws = await tmpdir('lg-stop-');
    await fs.mkdir(path.join(ws, '.github/guardian'), { recursive: true });
    const handle = await fs.open(path.join(ws, '.github/guardian/STOP_ALL'), 'w');
    await handle.write(`STOP 2026-11-23T10:00:00Z\nreason: `);
    const chunk = 'x'.repeat(1024 * 1024);
    for (let i = 0; i < 100; i++) await handle.write(chunk);
    await handle.close();
    const r = await hook(ws, pre(ws));
    assert.ok(refusedByStop(r));
    // The answer says it twice (STOP ends the run): to the model (the deny's reason) and to the person (stopReason).
    const out = JSON.parse(r.stdout) as { stopReason: string; hookSpecificOutput: { permissionDecisionReason: string } };
    for (const said of [out.stopReason, out.hookSpecificOutput.permissionDecisionReason]) assert.ok(said.length < 700, `${said.length} characters`);
    assert.ok(r.stdout.length < 2_000, `${r.stdout.length} characters`);
    assert.ok(r.ms < 3_000, `took ${r.ms} ms`);
  });

  /** The hook with its stdin a socket (as agents on Node give it) that gets `written` and never ends. */
  async function hookOnEndlessSocket(ws: string, written: string): Promise<CliRun> {
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, 'hook', 'claude', '--workspace', ws], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdin.on('error', () => undefined);
    child.stdin.write(written);
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    child.stdin.destroy();
    return { code: code ?? -1, stdout, stderr, ms: Date.now() - started, timedOut: code === null };
  }

  it('refuses by its deadline when stdin never ends but the project is known', async () => {
    const r = await hookOnEndlessSocket(await stoppedWorkspace(), '{"session_id":"S",');
    assert.ok(r.ms < 5_000, `took ${r.ms} ms`);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /"permissionDecision":"deny"/);
  });

  it('exits by its deadline when a socket stdin never ends and nothing says STOP (read through libuv\'s handle, not net)', async () => {
    // No STOP known before stdin: the socket is read through src/cli/stdinHandle.ts.
    const r = await hookOnEndlessSocket(await tmpProject(), '{"session_id":"S",');
    assert.ok(r.ms < 6_000, `took ${r.ms} ms`);
    assert.equal(r.code, 0);
    assert.match(r.stderr, /no decision within 3000 ms; the call is allowed \(fail-open\)/);
  });

  /**
   * The hook with its stdin a pipe (a named one here, as a shell or an agent written in Rust or Go
   * gives it an anonymous one): `parts` are written one after the other, `pauseMs` apart; the pipe
   * is closed after them unless `keepOpen`.
   */
  async function hookOnPipe(ws: string, parts: string[], opts: { pauseMs?: number; keepOpen?: boolean } = {}): Promise<CliRun & { stdout: string }> {
    const fifo = path.join(await tmpdir('lg-fifo-'), 'stdin');
    execFileSync('mkfifo', [fifo]);
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    const writer = openSync(fifo, constants.O_WRONLY);
    const started = Date.now();
    const child = spawn(process.execPath, [CLI, 'hook', 'claude', '--workspace', ws], { stdio: [reader, 'pipe', 'pipe'] });
    closeSync(reader);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    for (const [i, part] of parts.entries()) {
      if (i > 0) await new Promise((r) => setTimeout(r, opts.pauseMs ?? 0));
      writeSync(writer, part);
    }
    if (!opts.keepOpen) closeSync(writer);
    const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    const code = await closed;
    clearTimeout(killer);
    if (opts.keepOpen) closeSync(writer);
    return { code: code ?? -1, stdout, stderr, ms: Date.now() - started, timedOut: code === null };
  }

  it('stdin a pipe: read at once when its writer closed it, with the rest read as it comes, and by the deadline when it never ends', async () => {
    const call = JSON.stringify(pre('/ignored', 'p1', 'ls'));
    // Written and closed: decided and recorded.
    const open = await tmpdir('lg-stop-');
    const whole = await hookOnPipe(open, [call]);
    assert.equal(whole.code, 0, whole.stderr);
    assert.equal(whole.stdout, '');
    assert.match(await fs.readFile(path.join(open, '.tmp/current/logs/hook-claude-S.jsonl'), 'utf8'), /"command":"ls"/);
    // Written in two parts 300 ms apart: the first read at once, the rest as it comes.
    const halves = await hookOnPipe(open, [call.slice(0, 20), call.slice(20).replace('"ls"', '"pwd"')], { pauseMs: 300 });
    assert.equal(halves.code, 0, halves.stderr);
    assert.match(await fs.readFile(path.join(open, '.tmp/current/logs/hook-claude-S.jsonl'), 'utf8'), /"command":"pwd"/);
    // STOP: refused, whole or never ending.
    const stopped = await stoppedWorkspace();
    assert.ok(refusedByStop(await hookOnPipe(stopped, [call])));
    const never = await hookOnPipe(stopped, ['{"session_id":"S",'], { keepOpen: true });
    assert.equal(never.timedOut, false);
    assert.ok(never.ms < 5_000, `took ${never.ms} ms`);
    assert.ok(refusedByStop(never), never.stdout + never.stderr);
  });

  it('creates no project: a call from "/" with no marker, or a project folder that does not exist, writes nothing', async () => {
    const before = await fs.readdir('/');
    const r = await hook('/', { ...pre('/'), cwd: '/' }, { args: [], cwd: '/' });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /no project found.*nothing recorded/);
    assert.deepEqual(await fs.readdir('/'), before);
    const missing = path.join(await tmpdir('lg-stop-'), 'nonexistent', 'dir');
    const env = await hook(missing, { ...pre(missing), cwd: '/' }, { args: [], cwd: '/', env: { CLAUDE_PROJECT_DIR: missing } });
    assert.match(env.stderr, /no project found/);
    await assert.rejects(fs.stat(missing));
  });

  it('property: STOP wins for every agent, whatever arrives on stdin', async () => {
    const ws = await stoppedWorkspace();
    const io = (input: string) => ({ readStdin: async () => input, env: {}, cwd: ws });
    for (const agent of HOOK_AGENTS) {
      const { pre: preEvent, post } = agent.hook.events;
      const stdin = fc.oneof(
        fc.string({ maxLength: 200 }),
        fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
        fc
          .record({
            hook_event_name: fc.oneof(fc.constant(preEvent), fc.constant(undefined), fc.string({ maxLength: 12 })),
            session_id: fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.constant(undefined)),
            tool_name: fc.oneof(fc.string({ maxLength: 20 }), fc.constant(undefined), fc.constant(null)),
            tool_input: fc.oneof(fc.jsonValue({ maxDepth: 3 }), fc.constant(undefined)),
            cwd: fc.oneof(fc.constant(ws), fc.constant('/'), fc.string({ maxLength: 20 })),
          })
          .map((r) => JSON.stringify(r)),
      );
      await fc.assert(
        fc.asyncProperty(stdin, async (input) => {
          const reply = await runHook([agent.id, '--workspace', ws], io(input));
          let event: unknown;
          try {
            event = (JSON.parse(input) as { hook_event_name?: unknown }).hook_event_name;
          } catch {
            event = undefined;
          }
          // After a call (or on an event that is no call at all) there is nothing left to refuse.
          if (typeof event === 'string' && event !== preEvent && (post.includes(event) || event !== '')) return;
          // Refused in the agent's own dialect: its JSON decision (a deny, or, for an agent without one,
          // cancelling the task), or exit 2 for an agent that reads only exit codes.
          const refusedHere = agent.hook.deny('x').exitCode === 2 ? reply.exitCode === 2 && /STOP_ALL is set to STOP/.test(reply.stderr) : /deny|"cancel":true/.test(reply.stdout);
          assert.ok(refusedHere, `${agent.id} allowed ${input}: ${reply.stdout}${reply.stderr}`);
        }),
        { numRuns: 150 },
      );
    }
  });
});
