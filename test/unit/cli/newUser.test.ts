import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cli, runHook, tmpdir, tmpProject, write } from '../helpers';

/*
 * What a new user meets (issue 27): the project a command acts on, what it says when there is
 * none, the words of its errors, and a hooked loop named by the agent's own error.
 */

const pre = (ws: string, id: string, command = 'npm run build-missing') => ({ session_id: 's1', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: id, transcript_path: path.join(ws, 't.jsonl') });
const failure = (ws: string, id: string) => ({ ...pre(ws, id), hook_event_name: 'PostToolUseFailure', error: 'Exit code 1\nnpm error Missing script: "build-missing"' });

describe('what a new user meets', () => {
  it('`stop` run in a subfolder writes the project root\'s STOP_ALL, says where, and the hook refuses the next call', async () => {
    const ws = await tmpProject();
    const sub = path.join(ws, 'src', 'deep');
    await fs.mkdir(sub, { recursive: true });
    const r = await cli(['stop'], { cwd: sub });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, new RegExp(`in ${path.join(ws, '.github/guardian/STOP_ALL').replace(/[/.]/g, '\\$&')}`));
    await assert.rejects(fs.stat(path.join(sub, '.github')));
    const hooked = await runHook(ws, 'claude', pre(sub, 't1'));
    assert.match(hooked.stdout, /STOP_ALL is set to STOP/);
  });

  it('in a folder that is no project, `stop`, `init` and `scan` say so (exit 2) and create nothing', async () => {
    const none = await tmpdir();
    for (const args of [['stop'], ['init', 'claude'], ['scan'], ['status']]) {
      const r = await cli(args, { cwd: none });
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /no project here: no \.github\/guardian or \.git in .* or above/);
    }
    assert.deepEqual(await fs.readdir(none), []);
    // Named with --workspace, a folder is the project as given.
    assert.equal((await cli(['stop', '--workspace', none])).code, 0);
  });

  it('a mistyped agent or option gets a "did you mean"; no raw parser message', async () => {
    const ws = await tmpProject();
    const agent = await cli(['init', 'claud'], { cwd: ws });
    assert.equal(agent.code, 2);
    assert.match(agent.stderr, /unknown agent "claud"; did you mean 'claude'\?/);
    const option = await cli(['scan', '--jsn'], { cwd: ws });
    assert.equal(option.code, 2);
    assert.match(option.stderr, /unknown option --jsn; did you mean --json\?/);
    assert.doesNotMatch(option.stderr, /place it at the end of the command/);
    const help = await cli(['--help']);
    assert.ok(help.stdout.indexOf('  init ') < help.stdout.indexOf('  check '), 'the commands a person meets first come first');
    assert.match(help.stdout, /5 nothing could be read/);
  });

  it('a hooked loop is named by the call and its real error, not by the guardian\'s refusals', async () => {
    const ws = await tmpProject();
    for (const id of ['c1', 'c2']) {
      await runHook(ws, 'claude', pre(ws, id));
      await runHook(ws, 'claude', failure(ws, id));
    }
    // The agent keeps asking: nine refusals.
    for (let i = 3; i <= 11; i++) assert.match((await runHook(ws, 'claude', pre(ws, `c${i}`))).stdout, /Loop Guardian refused this call/);
    const scan = await cli(['scan', '--json'], { cwd: ws });
    const out = JSON.parse(scan.stdout) as { findings: { signal: string; action: string; message: string }[] };
    const halts = out.findings.filter((f) => f.action === 'halt');
    assert.ok(halts.length > 0, scan.stdout);
    for (const f of out.findings) assert.doesNotMatch(f.message, /fails with the same error.*Refused by Loop Guardian|error: Refused by Loop Guardian/, f.message);
    assert.ok(!out.findings.some((f) => f.signal === 'repeated-error' && f.action === 'halt'), 'two real failures are no repeated-error halt');
    assert.match(halts.map((f) => f.message).join('\n'), /Bash: npm run build-missing.*Missing script/);
  });
});

describe('init leaves the repository as it found it', () => {
  it('the hook\'s records under .tmp/ are kept out of git status (.git/info/exclude, never the team\'s .gitignore)', async () => {
    const ws = await tmpProject();
    await write(ws, '.git/info/exclude', '# git ls-files --others --exclude-from=.git/info/exclude\n');
    assert.equal((await cli(['init', 'codex'], { cwd: ws })).code, 0);
    const exclude = await fs.readFile(path.join(ws, '.git/info/exclude'), 'utf8');
    assert.match(exclude, /^\/\.tmp\/$/m);
    await assert.rejects(fs.stat(path.join(ws, '.gitignore')));
    assert.equal((await cli(['init', 'gemini'], { cwd: ws })).code, 0);
    assert.equal((await fs.readFile(path.join(ws, '.git/info/exclude'), 'utf8')).match(/^\/\.tmp\/$/gm)?.length, 1, 'once');
  });
});

describe('an incident as the terminal shows it', () => {
  it('names each other signal once, as it stands last (no "repeated-error (warn, 2/3)" twice)', async () => {
    const { formatIncident } = await import('../../../src/cli/io');
    const ref = (line: number) => ({ file: 'log.jsonl', line, event: line });
    const finding = (signal: string, action: 'warn' | 'halt', count: number, line: number) =>
      ({ signal, action, count, threshold: 3, at: ref(line), session: 's', subject: 'Bash', message: `${signal} ${count}`, recommendation: 'r', evidence: [ref(line)], episode: `${signal}|s|${line}` }) as never;
    const lead = finding('identical-calls', 'halt', 3, 3);
    const incident = { id: 'i', action: 'halt', session: 's', lead, findings: [lead, finding('repeated-error', 'warn', 2, 2), finding('repeated-error', 'warn', 2, 5), finding('failing-call', 'warn', 2, 3), finding('failing-call', 'halt', 3, 4)], evidence: [ref(3)] } as never;
    const text = formatIncident({ out: () => undefined, err: () => undefined, cwd: '/', color: false } as never, incident);
    assert.match(text, /also tripped: repeated-error \(warn, 2\/3\), failing-call \(halt, 3\/3\)$/);
  });
});

describe('watching an agent', () => {
  it('in a folder without a config file writes only that setting, not a file of defaults', async () => {
    const { setAgentWatched } = await import('../../../src/state/configFile');
    const { Workspace } = await import('../../../src/state/workspace');
    const ws = await tmpProject();
    await setAgentWatched(new Workspace(ws), 'claude', true);
    assert.deepEqual(JSON.parse(await fs.readFile(path.join(ws, '.github/guardian/config.json'), 'utf8')), { agents: { claude: { enabled: true } } });
    // What is there is kept; the setting is switched in place.
    await write(ws, '.github/guardian/config.json', JSON.stringify({ signals: { cycle: { threshold: 4 } }, agents: { claude: { enabled: true, home: '/x' } } }));
    await setAgentWatched(new Workspace(ws), 'claude', false);
    assert.deepEqual(JSON.parse(await fs.readFile(path.join(ws, '.github/guardian/config.json'), 'utf8')), { signals: { cycle: { threshold: 4 } }, agents: { claude: { enabled: false, home: '/x' } } });
  });
});
