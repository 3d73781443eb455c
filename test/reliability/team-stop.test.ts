import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HOOK_AGENTS } from '../../src/agents';
import { hookCommand, STOP_WITHOUT_GUARDIAN as STOP_WITHOUT } from '../../src/agents/hookSettings';
import { parseStopAllBytes } from '../../src/core/stopAll';
import { installLauncher, launcherPath } from '../../src/state/launcher';
import { cli, CLI, runProcess, tmpdir, type CliRun } from '../unit/helpers';

/*
 * A team's STOP where the guardian cannot run (issue 32, items 8, 10, 11, 12): the command `init`
 * registers, run by dash as an agent runs it, with no launcher (a teammate without the guardian)
 * and with a stale one (the install it starts is gone), beside the guardian's own hook (the real
 * CLI). Every HOME here is a temporary folder.
 */

const STOPPED = /STOP_ALL is set to STOP/;

/** A folder whose `sh` is dash, first on PATH: the registered command's inner `sh -c` runs under dash too. */
let dashBin: string;
before(async () => {
  dashBin = await tmpdir('lg-dash-');
  await fs.symlink('/usr/bin/dash', path.join(dashBin, 'sh'));
});

/** Runs the registered command as an agent does (`sh -c <command>`, stdin in), under dash, with HOME as given. */
function registered(agentId: string, cwd: string, input: string, home: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const agent = HOOK_AGENTS.find((a) => a.id === agentId);
  if (agent === undefined) throw new Error(agentId);
  return runProcess('/usr/bin/dash', ['-c', hookCommand(agent.id, agent.hook)], { cwd, input, timeoutMs: 20_000, env: { ...process.env, PATH: `${dashBin}:${process.env.PATH ?? ''}`, HOME: home, LOOP_GUARDIAN_HOME: '', ...extraEnv } });
}

/** How long `dash -c 'cat >/dev/null'` takes to read an input here, in ms. */
function catOf(input: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('/usr/bin/dash', ['-c', 'cat >/dev/null']);
    child.on('error', reject);
    child.on('close', () => resolve(Date.now() - started));
    child.stdin.end(input);
  });
}

function pre(ws: string): string {
  return JSON.stringify({ session_id: 'S', transcript_path: path.join(ws, 't.jsonl'), cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't1' });
}

/** The guardian's own hook (the real CLI) for Claude Code, `--workspace` given as the launcher's hook files give it. */
function guardian(ws: string, input: string, agent = 'claude'): Promise<CliRun> {
  return cli(['hook', agent, '--workspace', ws], { input, cwd: ws, timeoutMs: 20_000, env: { LOOP_GUARDIAN_HOME: '' } });
}

/** Runs `work` over `items`, `width` at a time. */
async function eachOf<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return out;
}

async function writeStopAll(ws: string, bytes: Uint8Array | string): Promise<string> {
  const file = path.join(ws, '.github/guardian/STOP_ALL');
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, bytes);
  return file;
}

const utf16le = (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
const utf16be = (text: string) => Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(text, 'utf16le').swap16()]);

/** Every spelling of issue 32 item 12, and what the one grammar (docs/formats.md, "STOP_ALL") says it is. */
const SPELLINGS: ReadonlyArray<readonly [string, Uint8Array | string, boolean]> = [
  ['STOP TIMESTAMP', 'STOP 2026-11-23T10:00:00Z\nreason: runaway\n', true],
  ["UTF-16 LE with BOM (Windows PowerShell 5.1's echo STOP > file)", utf16le('STOP\r\n'), true],
  ['UTF-16 BE with BOM', utf16be('STOP 2026-11-23T10:00:00Z\r\n'), true],
  ['UTF-16 LE without BOM', Buffer.from('STOP\r\n', 'utf16le'), true],
  ['UTF-16 LE CLEAR', utf16le('CLEAR\r\nSTOP\r\n'), false],
  ['UTF-8 BOM', '\uFEFFSTOP 2026-11-23T10:00:00Z\n', true],
  ['STOP: reason', 'STOP: runaway loops\n', true],
  ['Stop.', 'Stop.', true],
  ['stop', 'stop', true],
  ['STOP_ALL (an underscore is no letter)', 'STOP_ALL\n', true],
  ['leading blank lines', '\n\n   \n\t\nSTOP 2026-11-23T10:00:00Z\n', true],
  ['CRLF', 'STOP 2026-11-23T10:00:00Z\r\nreason: x\r\n', true],
  ['CR alone', '\r\rSTOP\r', true],
  ['non-breaking space before STOP', '\u00A0STOP\n', true],
  ['non-breaking space after STOP', 'STOP\u00A02026-11-23T10:00:00Z\n', true],
  ['a vertical-tab line before STOP', '\u000B\nSTOP\n', true],
  ['a form-feed line before STOP', '\u000C\nSTOP\n', true],
  ['tabs', '\t\tSTOP\t2026-11-23T10:00:00Z\n', true],
  ['STOP then a non-ASCII letter', 'STOPé\n', true],
  ['STOPPED', 'STOPPED\n', false],
  ['STOPS', 'stops', false],
  ['S T O P', 'S T O P\n', false],
  ['full-width STOP', '\uFF33\uFF34\uFF2F\uFF30\n', false],
  ['a zero-width space before STOP', '\u200BSTOP\n', false],
  ['CLEAR', 'CLEAR 2026-11-23T10:00:00Z\n', false],
  ['CLEAR, then STOP on line 2', 'CLEAR\nSTOP\n', false],
  ['PAUSE', 'PAUSE 2026-11-23T10:00:00Z\n', false],
  ['empty', '', false],
  ['blank', ' \n\t\r\n', false],
  ['garbage', 'HALT NOW please\n', false],
  ['binary garbage', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x53, 0x54, 0x4f, 0x50]), false],
  ['a timestamp first', '2026-11-23T10:00:00Z STOP\n', false],
  ['STOP ending at byte 4096', `${' '.repeat(4092)}STOP`, true],
  ['STOP past byte 4096', `${' '.repeat(4093)}STOP`, false],
];

describe('reliability: a team STOP without the guardian (the registered command, a stale launcher)', function () {
  this.timeout(240_000);

  it('one STOP_ALL grammar: the guardian and the fallback give the same answer for every spelling, and the expected one', async () => {
    const home = await tmpdir('lg-home-');
    const results = await eachOf(SPELLINGS, 3, async ([name, bytes, stops]) => {
      const ws = await tmpdir('lg-spell-');
      await writeStopAll(ws, bytes);
      const [byGuardian, byFallback] = await Promise.all([guardian(ws, pre(ws)), registered('claude', ws, pre(ws), home)]);
      const parsed = parseStopAllBytes(typeof bytes === 'string' ? Buffer.from(bytes) : bytes);
      return { name, stops, guardian: STOPPED.test(byGuardian.stdout), fallback: STOPPED.test(byFallback.stdout), core: parsed.ok && parsed.state.status === 'STOP', runs: [byGuardian, byFallback] };
    });
    const wrong = results.filter((r) => r.guardian !== r.stops || r.fallback !== r.stops || r.core !== r.stops);
    assert.deepEqual(
      wrong.map((r) => `${r.name}: expected ${r.stops ? 'STOP' : 'not STOP'}, guardian ${r.guardian}, fallback ${r.fallback}, parse ${r.core} (${r.runs.map((x) => x.stderr.trim()).join(' | ')})`),
      [],
    );
    // Each answer is the agent's whole answer, nothing else: exit 0 and the refusal, or exit 0 and nothing.
    for (const r of results) for (const run of r.runs) assert.equal(run.code, 0, `${r.name}: ${run.stderr}`);
  });

  it('the guardian says what it read a spelling that is no status as (CLEAR), naming the word', async () => {
    const ws = await tmpdir('lg-spell-');
    await writeStopAll(ws, 'STOPPED 2026-11-23T10:00:00Z\n');
    const r = await guardian(ws, pre(ws));
    assert.match(r.stderr, /STOP_ALL: line 1: status "STOPPED" is not one of CLEAR, STOP, PAUSE; read as CLEAR/);
  });

  for (const [kind, make] of [
    ['a FIFO', async (file: string) => void execFileSync('mkfifo', [file])],
    ['a link to /dev/zero', (file: string) => fs.symlink('/dev/zero', file)],
    ['a link to a FIFO', async (file: string) => {
      execFileSync('mkfifo', [`${file}.fifo`]);
      await fs.symlink(`${file}.fifo`, file);
    }],
    ['a folder', (file: string) => fs.mkdir(file)],
  ] as const) {
    it(`a hostile STOP_ALL (${kind}) hangs neither the fallback, nor a stale launcher, nor the guardian: each reads it as CLEAR (the guardian says so); an enclosing project's STOP still holds`, async () => {
      const home = await tmpdir('lg-home-');
      const stale = await tmpdir('lg-home-');
      await installLauncher({ cli: path.join(stale, 'gone', 'dist', 'cli.js'), node: path.join(stale, 'gone', 'node') }, { HOME: stale });
      const top = await tmpdir('lg-hostile-');
      const ws = path.join(top, 'vendor', 'lib');
      await fs.mkdir(path.join(ws, '.github/guardian'), { recursive: true });
      await make(path.join(ws, '.github/guardian/STOP_ALL'));
      for (const [where, expectStop] of [['alone', false], ['under a STOP above', true]] as const) {
        if (expectStop) await writeStopAll(top, 'STOP 2026-11-23T10:00:00Z\n');
        const [fallback, launcher, byGuardian] = await Promise.all([registered('claude', ws, pre(ws), home), registered('claude', ws, pre(ws), stale), guardian(ws, pre(ws))]);
        for (const [who, r] of [['the fallback', fallback], ['the stale launcher', launcher], ['the guardian', byGuardian]] as const) {
          assert.equal(r.timedOut, false, `${who} hung (${kind}, ${where})`);
          assert.ok(r.ms < 5_000, `${who} took ${r.ms} ms (${kind}, ${where})`);
          assert.equal(r.code, 0, `${who}: ${r.stderr}`);
          assert.equal(STOPPED.test(r.stdout), expectStop, `${who} (${kind}, ${where}): ${r.stdout}${r.stderr}`);
        }
        if (!expectStop) assert.match(byGuardian.stderr, /STOP_ALL: unreadable: is (a FIFO|a character device|a folder), not a regular file; read as CLEAR/);
      }
    });
  }

  it('a STOP_ALL of 100 MB is read bounded: STOP at its head refuses and garbage reads as CLEAR, each within 3 s of the same call over a file of one line', async () => {
    const home = await tmpdir('lg-home-');
    for (const [head, stops] of [['STOP 2026-11-23T10:00:00Z\nreason: ', true], ['x', false]] as const) {
      const ws = await tmpdir('lg-big-');
      const file = await writeStopAll(ws, head);
      const handle = await fs.open(file, 'a');
      const chunk = Buffer.alloc(1024 * 1024, 'x');
      for (let i = 0; i < 100; i++) await handle.write(chunk);
      await handle.close();
      // The same calls over a STOP_ALL of one line, at the same time: what this machine's load costs (two cores shared).
      const small = await tmpdir('lg-small-');
      await writeStopAll(small, head);
      const [fallback, byGuardian, smallFallback, smallGuardian] = await Promise.all([registered('claude', ws, pre(ws), home), guardian(ws, pre(ws)), registered('claude', small, pre(small), home), guardian(small, pre(small))]);
      for (const [who, r, base] of [['the fallback', fallback, smallFallback], ['the guardian', byGuardian, smallGuardian]] as const) {
        assert.equal(STOPPED.test(r.stdout), stops, r.stdout + r.stderr);
        assert.ok(r.ms < base.ms + 3_000, `${who} took ${r.ms} ms, ${base.ms} ms over a STOP_ALL of one line`);
      }
    }
  });

  it('a 50 MB call under STOP, with no launcher and with a stale one: the agent\'s answer for its event within twice what `cat` takes to read the same call here and 3 s, the call read to its end (no EPIPE)', async () => {
    const none = await tmpdir('lg-home-');
    const stale = await tmpdir('lg-home-');
    await installLauncher({ cli: path.join(stale, 'gone', 'cli.js') }, { HOME: stale });
    const ws = await tmpdir('lg-big-call-');
    await writeStopAll(ws, 'STOP 2026-11-23T10:00:00Z\n');
    const huge = 'x'.repeat(50 * 1024 * 1024);
    // `catOf`: the same bytes through a shell that only reads them, what the pipe and this machine's load (two cores shared) cost.
    for (const home of [none, stale]) {
      const promptCall = JSON.stringify({ session_id: 's', cwd: ws, hook_event_name: 'UserPromptSubmit', prompt: `${huge}\u00ff` });
      const postCall = JSON.stringify({ session_id: 's', cwd: ws, hook_event_name: 'PostToolUse', tool_name: 'Write', tool_input: { content: huge }, tool_response: {} });
      const prompt = await registered('claude', ws, promptCall, home);
      const catPrompt = await catOf(promptCall);
      assert.match(prompt.stdout, /^\{"decision":"block","reason":"STOP_ALL is set to STOP/);
      const post = await registered('claude', ws, postCall, home);
      const catPost = await catOf(postCall);
      assert.deepEqual([post.code, post.stdout], [0, '']);
      for (const [r, base] of [[prompt, catPrompt], [post, catPost]] as const) assert.ok(r.ms < 2 * base + 3_000, `took ${r.ms} ms, cat ${base} ms`);
    }
  });

  it('a stale launcher (the install gone, its node gone) falls back to the same STOP check: STOP refuses for every agent in its own answer, CLEAR lets every call through', async () => {
    const home = await tmpdir('lg-home-');
    // The extension uninstalled, nvm's Node removed: the launcher names a CLI and a node that are gone.
    await installLauncher({ cli: path.join(home, 'ext', 'gone', 'dist', 'cli.js'), node: path.join(home, '.nvm', 'versions', 'node', 'v20.0.0', 'bin', 'node') }, { HOME: home });
    assert.ok((await fs.stat(launcherPath({ HOME: home }))).isFile());
    const none = await tmpdir('lg-home-');
    const ws = await tmpdir('lg-stale-');
    for (const [text, stops] of [['STOP 2026-11-23T10:00:00Z\n', true], ['CLEAR 2026-11-23T10:00:00Z\n', false]] as const) {
      await writeStopAll(ws, text);
      for (const agent of HOOK_AGENTS) {
        const payload = JSON.stringify({ hook_event_name: agent.hook.events.pre, tool_name: 'Bash', tool_input: { command: 'ls' }, session_id: 's', cwd: ws });
        const [stale, missing] = await Promise.all([registered(agent.id, ws, payload, home), registered(agent.id, ws, payload, none)]);
        const expected = stops ? (agent.hook.halt?.(STOP_WITHOUT) ?? agent.hook.deny(STOP_WITHOUT)) : agent.hook.allow();
        assert.deepEqual([stale.code, stale.stdout], [expected.exitCode, expected.stdout], `${agent.id}, stale launcher, ${text.trim()}: ${stale.stderr}`);
        // The same answer as where there is no launcher at all.
        assert.deepEqual([stale.code, stale.stdout, stale.stderr], [missing.code, missing.stdout, missing.stderr], agent.id);
      }
    }
    // The install is there but no runtime is found (its node gone, none on PATH): the same STOP check.
    await installLauncher({ cli: await fs.realpath(CLI), node: path.join(home, 'gone-node') }, { HOME: home });
    const noNode = await tmpdir('lg-path-');
    for (const tool of ['sh', 'head', 'tr', 'grep', 'sed', 'cat']) await fs.symlink(tool === 'sh' ? '/usr/bin/dash' : execFileSync('/usr/bin/dash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), path.join(noNode, tool));
    await writeStopAll(ws, 'STOP 2026-11-23T10:00:00Z\n');
    const r = await registered('claude', ws, pre(ws), home, { PATH: noNode });
    assert.match(r.stdout, /"permissionDecision":"deny"/);
    assert.match(r.stdout, STOPPED);
    await writeStopAll(ws, 'CLEAR\n');
    assert.deepEqual((await registered('claude', ws, pre(ws), home, { PATH: noNode })).stdout, '');
  });

  it('each event kind gets the answer the guardian gives it under STOP, in the agent\'s form for that event (a prompt refused as a prompt, a call already run let be), with no launcher and with a stale one', async () => {
    const none = await tmpdir('lg-home-');
    const stale = await tmpdir('lg-home-');
    await installLauncher({ cli: path.join(stale, 'gone', 'cli.js') }, { HOME: stale });
    const ws = await tmpdir('lg-events-');
    await writeStopAll(ws, 'STOP 2026-11-23T10:00:00Z\n');
    const shapeOf = (r: CliRun) => {
      const out = r.stdout.trim();
      if (out === '') return { code: r.code, out: '' };
      const json = JSON.parse(out) as Record<string, unknown>;
      // The reasons differ (the guardian's names the file's; the fallback says the guardian is not installed): the rest must not.
      const strip = (v: unknown): unknown => (typeof v === 'object' && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, /reason|message|stopReason|user_message|agent_message/i.test(k) ? typeof x : strip(x)])) : v);
      return { code: r.code, out: JSON.stringify(strip(json)) };
    };
    const compared: string[] = [];
    // The agents whose hooks send their event under hook_event_name, each registered event.
    for (const agent of HOOK_AGENTS.filter((a) => ['claude', 'codex', 'gemini', 'cursor'].includes(a.id))) {
      for (const event of agent.hook.registration.events) {
        const payload = JSON.stringify({ session_id: 's', conversation_id: 's', transcript_path: path.join(ws, 'none.jsonl'), cwd: ws, hook_event_name: event, tool_name: 'Bash', tool_input: { command: 'echo "hook_event_name": "UserPromptSubmit"' }, ...(agent.hook.events.post.includes(event) ? { tool_response: { stdout: '' }, tool_output: '' } : {}), prompt: 'go on' });
        const [byGuardian, fallback, launcher] = await Promise.all([guardian(ws, payload, agent.id), registered(agent.id, ws, payload, none), registered(agent.id, ws, payload, stale)]);
        assert.deepEqual(shapeOf(fallback), shapeOf(byGuardian), `${agent.id} ${event}: fallback ${fallback.stdout} guardian ${byGuardian.stdout}`);
        assert.deepEqual(shapeOf(launcher), shapeOf(byGuardian), `${agent.id} ${event}: stale launcher ${launcher.stdout}`);
        compared.push(`${agent.id} ${event}: ${shapeOf(fallback).out || `exit ${fallback.code}`}`);
      }
    }
    // Claude Code's prompt: `{"decision":"block","reason"}` (code.claude.com/docs/en/hooks, "UserPromptSubmit decision control").
    assert.ok(compared.includes('claude UserPromptSubmit: {"decision":"block","reason":"string"}'), compared.join('\n'));
    assert.ok(compared.includes('claude PostToolUse: exit 0'), compared.join('\n'));
  });
});

