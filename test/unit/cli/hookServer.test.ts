import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { connect } from 'node:net';
import * as path from 'node:path';
import { HOOK_AGENTS } from '../../../src/agents';
import { hookCommand } from '../../../src/agents/hookSettings';
import { FrameError, readFrame } from '../../../src/hook/server';
import { installLauncher } from '../../../src/state/launcher';
import { CLI, hookLogLines, tmpdir, tmpProject, write } from '../helpers';

/*
 * The hook server (src/hook/server.ts) and the hook client beside the launcher: a hook call
 * answered by one long-lived process gets the answer the hook process gives, STOP never depends
 * on it, and a client that is not its own gets nothing from it.
 */

const claude = HOOK_AGENTS.find((a) => a.id === 'claude');

function frame(fields: readonly string[], payload: string): Buffer {
  return Buffer.concat([Buffer.from(fields.map((f) => `${f}\0`).join('')), Buffer.from(`${Buffer.byteLength(payload)}\0`), Buffer.from(payload)]);
}

describe('the hook server: its requests', () => {
  const fields = ['LGH1', 'tok', '/x/dist/cli.js', '/work', '2', 'hook', 'claude', '2', 'A=1', 'B=x=y'];
  it('reads a whole request, and nothing before it is whole', () => {
    const bytes = frame(fields, '{"a":"é"}');
    for (let n = 0; n < bytes.length; n++) assert.equal(readFrame(bytes.subarray(0, n)), undefined, `${n} bytes`);
    const r = readFrame(bytes);
    assert.deepEqual(r, { token: 'tok', cli: '/x/dist/cli.js', cwd: '/work', argv: ['hook', 'claude'], env: { A: '1', B: 'x=y' }, payload: '{"a":"é"}' });
  });
  it('refuses what is not a request: another protocol, a bad count, bytes past the payload, a header without end', () => {
    assert.throws(() => readFrame(Buffer.from('GET / HTTP/1.1\r\n\0')), FrameError);
    assert.throws(() => readFrame(frame(['LGH1', 't', 'c', 'w', '-1'], '')), FrameError);
    assert.throws(() => readFrame(frame(['LGH1', 't', 'c', 'w', '99999999999'], '')), FrameError);
    assert.throws(() => readFrame(Buffer.concat([frame(fields, '{}'), Buffer.from('x')])), FrameError);
    assert.throws(() => readFrame(Buffer.alloc(2 * 1024 * 1024, 0x41)), FrameError);
    assert.throws(() => readFrame(frame(['LGH1', 't', 'c', 'w', '0', '0', String(64 * 1024 * 1024)], '')), FrameError);
  });
});

describe('the hook server: a hook call through the launcher', function () {
  // Real shells, a real server process, real agents' payloads: seconds on a loaded machine.
  this.timeout(120_000);
  if (claude === undefined) throw new Error('no claude protocol');
  const command = hookCommand('claude', claude.hook);
  const homes: string[] = [];
  // Each test's server goes when its folder does (checked every 2 s); no need to wait for it.
  after(async () => {
    for (const h of homes) await fs.rm(h, { recursive: true, force: true });
  });

  /** A guardian home whose launcher starts Node through a counting wrapper: how many hook processes ran. */
  async function home(): Promise<{ env: NodeJS.ProcessEnv; starts: () => Promise<number>; server: () => Promise<{ port: number; token: string; pid: number } | undefined> }> {
    const dir = await tmpdir('lg-home-');
    homes.push(dir);
    const count = path.join(dir, 'starts');
    const wrapper = path.join(dir, 'node-wrapper');
    await fs.writeFile(wrapper, `#!/bin/sh\necho x >> '${count}'\nexec '${process.execPath}' "$@"\n`, { mode: 0o755 });
    const env = { LOOP_GUARDIAN_HOME: dir, LOOP_GUARDIAN_HOOK_SERVER: '' };
    await installLauncher({ cli: await fs.realpath(CLI), node: wrapper }, env);
    return {
      env,
      starts: async () => (await fs.readFile(count, 'utf8').catch(() => '')).split('\n').filter(Boolean).length,
      server: async () => {
        const text = await fs.readFile(path.join(dir, 'run', 'hook-server'), 'utf8').catch(() => undefined);
        const m = text === undefined ? null : /^(\d+) ([0-9a-f]{32}) (\d+)\n$/.exec(text);
        return m === null ? undefined : { port: Number(m[1]), token: m[2] as string, pid: Number(m[3]) };
      },
    };
  }

  function hook(env: NodeJS.ProcessEnv, ws: string, payload: object) {
    const r = spawnSync('/bin/sh', ['-c', command], { input: JSON.stringify(payload), env: { ...process.env, ...env, CLAUDE_PROJECT_DIR: ws }, cwd: ws, encoding: 'utf8', timeout: 30_000 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  const pre = (i: number) => ({ session_id: 's1', transcript_path: '/nonexistent/t.jsonl', cwd: '', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'npm run db:migrate' }, tool_use_id: `toolu_${i}` });
  const fail = (i: number) => ({ ...pre(i), hook_event_name: 'PostToolUseFailure', error: 'Error: connect ECONNREFUSED 127.0.0.1:5432' });

  async function waitFor<T>(what: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
    const end = Date.now() + ms;
    for (;;) {
      const v = await what();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error('not in time');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** The same failing call, tried again and again: each call's answer, and what the session's log holds, without times and ids. */
  async function loop(env: NodeJS.ProcessEnv, ws: string, started?: () => Promise<unknown>) {
    const answers: { code: number | null; stdout: string }[] = [];
    for (let i = 1; i <= 5; i++) {
      const p = { ...pre(i), cwd: ws };
      const a = hook(env, ws, p);
      answers.push({ code: a.code, stdout: a.stdout });
      if (i === 1 && started) await started();
      if (a.stdout.includes('"deny"')) break;
      hook(env, ws, { ...fail(i), cwd: ws });
    }
    const log = (await hookLogLines(ws)).map(({ ts: _ts, id: _id, ...rest }) => rest);
    return { answers, log };
  }

  it('answers as the hook process does, call by call, and the hook process runs once, to start it', async () => {
    const viaServer = await home();
    const direct = await home();
    const a = await tmpProject();
    const b = await tmpProject();
    const served = await loop(viaServer.env, a, () => waitFor(viaServer.server));
    const alone = await loop({ ...direct.env, LOOP_GUARDIAN_HOOK_SERVER: 'off' }, b);
    assert.deepEqual(served, alone);
    assert.ok(served.answers.at(-1)?.stdout.includes('"permissionDecision":"deny"'), JSON.stringify(served.answers));
    assert.equal(await viaServer.starts(), 1, 'one hook process (the first call, which started the server)');
    assert.equal(await direct.starts(), served.answers.length * 2 - 1, 'LOOP_GUARDIAN_HOOK_SERVER=off: a hook process for every call');
  });

  it('STOP never goes through it: with STOP_ALL saying STOP the hook process refuses the call; after CLEAR the server answers again', async () => {
    const h = await home();
    const ws = await tmpProject();
    hook(h.env, ws, { ...pre(1), cwd: ws });
    await waitFor(h.server);
    const before = await h.starts();
    await write(ws, '.github/guardian/STOP_ALL', 'STOP 2026-11-28T06:00:00Z\nreason: the team stopped\n');
    await fs.mkdir(path.join(ws, 'src'));
    const stopped = hook(h.env, path.join(ws, 'src'), { ...pre(2), cwd: path.join(ws, 'src') });
    assert.match(stopped.stdout, /"permissionDecision":"deny"/);
    assert.match(stopped.stdout, /STOP_ALL/);
    assert.equal(await h.starts(), before + 1, 'the hook process answered under STOP');
    await write(ws, '.github/guardian/STOP_ALL', 'CLEAR 2026-11-28T06:05:00Z\n');
    const cleared = hook(h.env, ws, { ...pre(3), tool_input: { command: 'ls' }, cwd: ws });
    assert.equal(cleared.code, 0);
    assert.doesNotMatch(cleared.stdout, /deny/);
    assert.equal(await h.starts(), before + 1, 'the server answered after CLEAR');
  });

  it('a client without its token, or not speaking its protocol, gets nothing and changes nothing; the server goes on answering', async () => {
    const h = await home();
    const ws = await tmpProject();
    hook(h.env, ws, { ...pre(1), cwd: ws });
    const server = await waitFor(h.server);
    const logBefore = await hookLogLines(ws);
    const talk = (bytes: Buffer) =>
      new Promise<string>((resolve) => {
        const s = connect(server.port, '127.0.0.1');
        let got = '';
        s.on('data', (d) => (got += d.toString()));
        s.on('close', () => resolve(got));
        s.on('error', () => resolve(got));
        s.end(bytes);
      });
    const wrong = frame(['LGH1', '0'.repeat(32), await fs.realpath(CLI), ws, '2', 'hook', 'claude', '0'], JSON.stringify({ ...pre(2), cwd: ws }));
    assert.equal(await talk(wrong), '', 'a wrong token: closed unanswered');
    assert.equal(await talk(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n')), '');
    assert.equal(await talk(Buffer.alloc(2 * 1024 * 1024, 0x41)), '');
    // Its token, from another install: asked to go to the hook process instead.
    assert.equal(await talk(frame(['LGH1', server.token, '/elsewhere/dist/cli.js', ws, '2', 'hook', 'claude', '0'], '{}')), 'R\n');
    assert.deepEqual(await hookLogLines(ws), logBefore, 'nothing recorded');
    // A call with a 3 MB output, in many chunks, with its token: answered (exit 0, nothing on stdout), and recorded.
    const big = { ...pre(1), cwd: ws, hook_event_name: 'PostToolUse', tool_response: { stdout: 'x'.repeat(3 * 1024 * 1024), stderr: '' } };
    assert.equal(await talk(frame(['LGH1', server.token, await fs.realpath(CLI), ws, '2', 'hook', 'claude', '1', `HOME=${process.env.HOME ?? '/'}`], JSON.stringify(big))), '0\n0\n');
    const after = await hookLogLines(ws);
    assert.equal(after.length, logBefore.length + 1, 'the outcome recorded');
    const before = await h.starts();
    const ok = hook(h.env, ws, { ...pre(3), tool_input: { command: 'ls' }, cwd: ws });
    assert.equal(ok.code, 0);
    assert.equal(await h.starts(), before, 'the server answered');
  });

  it('a server that is gone: the hook process answers, and starts another; one that goes quiet: the hook process answers within seconds', async () => {
    const h = await home();
    const ws = await tmpProject();
    hook(h.env, ws, { ...pre(1), cwd: ws });
    const first = await waitFor(h.server);
    process.kill(first.pid, 'SIGKILL');
    const before = await h.starts();
    const r = hook(h.env, ws, { ...pre(2), tool_input: { command: 'ls' }, cwd: ws });
    assert.equal(r.code, 0);
    assert.equal(await h.starts(), before + 1);
    const second = await waitFor(async () => {
      const s = await h.server();
      return s !== undefined && s.pid !== first.pid ? s : undefined;
    });
    process.kill(second.pid, 'SIGSTOP');
    try {
      const t0 = Date.now();
      const quiet = hook(h.env, ws, { ...pre(3), tool_input: { command: 'ls -la' }, cwd: ws });
      assert.equal(quiet.code, 0, quiet.stderr);
      assert.ok(Date.now() - t0 < 9000, `answered in ${Date.now() - t0} ms`);
      assert.equal(await h.starts(), before + 2);
    } finally {
      process.kill(second.pid, 'SIGKILL');
    }
  });

  it('reads the caller\'s environment, not its own: the project named only by CLAUDE_PROJECT_DIR, from a folder outside it', async () => {
    const h = await home();
    const ws = await tmpProject();
    const outside = await tmpdir();
    hook(h.env, ws, { ...pre(1), cwd: ws });
    await waitFor(h.server);
    const before = await h.starts();
    const r = spawnSync('/bin/sh', ['-c', command], { input: JSON.stringify({ ...pre(2), tool_input: { command: 'make from-outside' }, cwd: outside }), env: { ...process.env, ...h.env, CLAUDE_PROJECT_DIR: ws }, cwd: outside, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(await h.starts(), before, 'the server answered');
    const calls = (await hookLogLines(ws)).filter((e) => e.type === 'tool').map((e) => (e.args as { command?: string }).command);
    assert.ok(calls.includes('make from-outside'), JSON.stringify(calls));
  });

  it('goes away when its folder does, and makes nothing of it again', async () => {
    const h = await home();
    const ws = await tmpProject();
    hook(h.env, ws, { ...pre(1), cwd: ws });
    const s = await waitFor(h.server);
    await fs.rm(h.env.LOOP_GUARDIAN_HOME as string, { recursive: true, force: true });
    await waitFor(async () => {
      try {
        process.kill(s.pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    // Nothing of it made again on the way out (its code cache, its run file): a folder deleted stays deleted.
    await assert.rejects(fs.stat(h.env.LOOP_GUARDIAN_HOME as string));
  });
});
