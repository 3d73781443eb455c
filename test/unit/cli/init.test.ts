import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { claude } from '../../../src/agents/claude';
import { gemini } from '../../../src/agents/gemini';
import { hookCommand, isGuardianHook, mergeHookSettings } from '../../../src/agents/hookSettings';
import { cli, tmpdir, write } from '../helpers';

const read = async (ws: string, rel: string) => JSON.parse(await fs.readFile(path.join(ws, rel), 'utf8')) as Record<string, any>;

describe('loop-guardian init (hook registration)', () => {
  it("Claude Code: merges into the per-user .claude/settings.local.json through the launcher, keeping every other setting and hook; git ignores it in this clone; a second run changes nothing", async () => {
    const ws = await tmpdir();
    await fs.mkdir(path.join(ws, '.git', 'info'), { recursive: true });
    await write(ws, '.git/info/exclude', '# git ls-files --others --exclude-from=.git/info/exclude\n*.swp');
    const mine = { type: 'command', command: 'npx prettier --write', timeout: 30 };
    const shared = JSON.stringify({ permissions: { allow: ['Bash(npm test)'] }, hooks: { Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }] } }, null, 2);
    await write(ws, '.claude/settings.json', shared);
    await write(ws, '.claude/settings.local.json', JSON.stringify({ permissions: { allow: ['Bash(make)'] }, hooks: { PostToolUse: [{ matcher: 'Edit|Write', hooks: [mine] }] } }, null, 2));
    const r = await cli(['init', 'claude', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Updated \.claude\/settings\.local\.json: the hook runs on PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit/);
    const s = await read(ws, '.claude/settings.local.json');
    assert.deepEqual(s.permissions, { allow: ['Bash(make)'] });
    assert.deepEqual(s.hooks.PostToolUse[0], { matcher: 'Edit|Write', hooks: [mine] });
    assert.equal(s.hooks.PostToolUse.length, 2);
    const command = hookCommand('claude', claude.hook!);
    assert.deepEqual(s.hooks.PreToolUse, [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 10 }] }]);
    // No path of this checkout in what the agent runs: the launcher's, the same on every machine.
    assert.doesNotMatch(JSON.stringify(s), /dist\/cli\.js|\/tmp\//);
    assert.equal(await fs.readFile(path.join(ws, '.claude/settings.json'), 'utf8'), shared, 'the shared file is not touched');
    // The file existed: it was not created here, so git's ignore list is left as it is.
    assert.doesNotMatch(await fs.readFile(path.join(ws, '.git/info/exclude'), 'utf8'), /settings\.local/);
    const again = await cli(['init', 'claude', '--workspace', ws]);
    assert.match(again.stdout, /already runs the hook/);
    assert.deepEqual(await read(ws, '.claude/settings.local.json'), s);
  });

  it('Claude Code: a settings.local.json it creates is added once to .git/info/exclude (never to the shared .gitignore)', async () => {
    const ws = await tmpdir();
    await write(ws, '.git/info/exclude', '*.swp');
    const r = await cli(['init', 'claude', '--workspace', ws]);
    assert.match(r.stdout, /Created \.claude\/settings\.local\.json/);
    assert.match(r.stdout, /Added \.claude\/settings\.local\.json to \.git\/info\/exclude/);
    assert.equal(await fs.readFile(path.join(ws, '.git/info/exclude'), 'utf8'), '*.swp\n/.claude/settings.local.json\n/.tmp/\n');
    await fs.rm(path.join(ws, '.claude/settings.local.json'));
    await cli(['init', 'claude', '--workspace', ws]);
    assert.equal(await fs.readFile(path.join(ws, '.git/info/exclude'), 'utf8'), '*.swp\n/.claude/settings.local.json\n/.tmp/\n');
    await assert.rejects(fs.stat(path.join(ws, '.gitignore')));
    // Not a clone: nothing to tell git.
    const plain = await tmpdir();
    assert.doesNotMatch((await cli(['init', 'claude', '--workspace', plain])).stdout, /exclude/);
    await assert.rejects(fs.stat(path.join(plain, '.git')));
  });

  it("Claude Code: an earlier init's absolute-path entry in the shared .claude/settings.json is moved to settings.local.json; the team's own hooks stay", async () => {
    const ws = await tmpdir();
    const old = 'node "/home/someone/agent-loop-guardian/dist/cli.js" hook claude';
    const lint = { type: 'command', command: 'npm run lint', timeout: 30 };
    await write(
      ws,
      '.claude/settings.json',
      JSON.stringify({
        permissions: { allow: ['Bash(npm test)'] },
        hooks: {
          PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: old, timeout: 10 }] }],
          PostToolUse: [{ matcher: '*', hooks: [lint, { type: 'command', command: old, timeout: 10 }] }],
          PostToolUseFailure: [{ matcher: '*', hooks: [{ type: 'command', command: old, timeout: 10 }] }],
          // Another agent's hook in the same file is not ours to move.
          Stop: [{ hooks: [{ type: 'command', command: 'node "/x/dist/cli.js" hook codex' }] }],
        },
      }),
    );
    const r = await cli(['init', 'claude', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Moved the earlier registration out of \.claude\/settings\.json \(PreToolUse, PostToolUse, PostToolUseFailure\)/);
    const shared = await read(ws, '.claude/settings.json');
    assert.deepEqual(shared, {
      permissions: { allow: ['Bash(npm test)'] },
      hooks: { PostToolUse: [{ matcher: '*', hooks: [lint] }], Stop: [{ hooks: [{ type: 'command', command: 'node "/x/dist/cli.js" hook codex' }] }] },
    });
    const local = await read(ws, '.claude/settings.local.json');
    for (const event of ['PreToolUse', 'PostToolUse', 'PostToolUseFailure']) assert.equal(local.hooks[event][0].hooks[0].command, hookCommand('claude', claude.hook!));
    assert.match((await cli(['init', 'claude', '--workspace', ws])).stdout, /already runs the hook/);
    assert.deepEqual(await read(ws, '.claude/settings.json'), shared);
  });

  it('Claude Code: a shared settings.json that already runs the launcher (a team that committed it) stays the registration: nothing is added', async () => {
    const ws = await tmpdir();
    const command = hookCommand('claude', claude.hook!);
    const team = { hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 10 }] }] } };
    await write(ws, '.claude/settings.json', JSON.stringify(team));
    const r = await cli(['init', 'claude', '--workspace', ws]);
    assert.match(r.stdout, /\.claude\/settings\.json already runs the hook: nothing to change/);
    await assert.rejects(fs.stat(path.join(ws, '.claude/settings.local.json')));
    assert.deepEqual(await read(ws, '.claude/settings.json'), team);
  });

  it('--shared: Claude Code\'s hook goes into the team\'s .claude/settings.json (to commit: not excluded from git), and a later plain init leaves it there', async () => {
    const ws = await tmpdir();
    await fs.mkdir(path.join(ws, '.git', 'info'), { recursive: true });
    await write(ws, '.claude/settings.json', JSON.stringify({ permissions: { allow: ['Bash(npm test)'] } }, null, 2));
    const r = await cli(['init', 'claude', '--shared', '--workspace', ws]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Updated \.claude\/settings\.json: the hook runs on PreToolUse/);
    const s = await read(ws, '.claude/settings.json');
    assert.deepEqual(s.permissions, { allow: ['Bash(npm test)'] });
    assert.equal(s.hooks.PreToolUse[0].hooks[0].command, hookCommand('claude', claude.hook!));
    await assert.rejects(fs.stat(path.join(ws, '.claude', 'settings.local.json')));
    assert.doesNotMatch(await fs.readFile(path.join(ws, '.git', 'info', 'exclude'), 'utf8').catch(() => ''), /settings/);
    const again = await cli(['init', 'claude', '--workspace', ws]);
    assert.equal(again.code, 0, again.stderr);
    await assert.rejects(fs.stat(path.join(ws, '.claude', 'settings.local.json')), 'the shared registration stays the one');
    // Another agent's file is its team's already: --shared changes nothing there.
    const g = await cli(['init', 'gemini', '--shared', '--workspace', ws]);
    assert.match(g.stdout, /\.gemini\/settings\.json/);
  });

  it('registers the prompt hook: UserPromptSubmit without a matcher (Claude Code), userPromptSubmitted (the Copilot hook file); an older install gains it, its after-call records moved to the background, and nothing else', async () => {
    const ws = await tmpdir();
    const command = hookCommand('claude', claude.hook!);
    const tool = (matcher: string) => ({ matcher, hooks: [{ type: 'command', command, timeout: 10 }] });
    // What init wrote before the prompt hook existed.
    const older = { permissions: { allow: ['Bash(make)'] }, hooks: { PreToolUse: [tool('*')], PostToolUse: [tool('*')], PostToolUseFailure: [tool('*')] } };
    await write(ws, '.claude/settings.local.json', JSON.stringify(older));
    const r = await cli(['init', 'claude', '--workspace', ws, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { file: string; added: string[]; updated: string[] };
    assert.equal(out.file, '.claude/settings.local.json');
    assert.deepEqual(out.added, ['UserPromptSubmit']);
    // The after-call records decide nothing: Claude Code runs them in the background (`async`).
    assert.deepEqual(out.updated, ['PostToolUse', 'PostToolUseFailure']);
    const s = await read(ws, '.claude/settings.local.json');
    assert.deepEqual(s.hooks.UserPromptSubmit, [{ hooks: [{ type: 'command', command, timeout: 10 }] }]);
    const background = { matcher: '*', hooks: [{ type: 'command', command, timeout: 10, async: true }] };
    assert.deepEqual(s, { ...older, hooks: { ...older.hooks, PostToolUse: [background], PostToolUseFailure: [background], UserPromptSubmit: s.hooks.UserPromptSubmit } }, 'nothing else changed');
    // An entry that decides never runs in the background: a PreToolUse someone made async is made blocking again.
    const edited = { ...s, hooks: { ...s.hooks, PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command, timeout: 10, async: true }] }] } };
    await write(ws, '.claude/settings.local.json', JSON.stringify(edited));
    const again = JSON.parse((await cli(['init', 'claude', '--workspace', ws, '--json'])).stdout) as { updated: string[] };
    assert.deepEqual(again.updated, ['PreToolUse']);
    assert.deepEqual((await read(ws, '.claude/settings.local.json')).hooks.PreToolUse, older.hooks.PreToolUse);
    assert.equal((JSON.parse((await cli(['init', 'claude', '--workspace', ws, '--json'])).stdout) as { added: string[] }).added.length, 0);
    assert.equal((await cli(['init', 'copilot-cli', '--workspace', ws])).code, 0);
    const copilot = await read(ws, '.github/hooks/loop-guardian.json');
    // permissionRequest: where Copilot CLI can be ended (a refused shell call is ended there).
    assert.deepEqual(Object.keys(copilot.hooks), ['preToolUse', 'postToolUse', 'postToolUseFailure', 'userPromptSubmitted', 'permissionRequest']);
  });

  it('updates a registration whose path changed instead of adding a second one', () => {
    const first = mergeHookSettings(undefined, 'gemini', gemini.hook!.registration, 'node "/old/dist/cli.js" hook gemini', 'x');
    const second = mergeHookSettings(first.settings, 'gemini', gemini.hook!.registration, 'node "/new/dist/cli.js" hook gemini', 'x');
    assert.deepEqual(second.added, []);
    assert.deepEqual(second.updated, ['BeforeTool', 'AfterTool', 'BeforeAgent']);
    const hooks = second.settings.hooks as Record<string, { hooks: { command: string; timeout: number }[] }[]>;
    assert.equal(hooks.BeforeTool?.length, 1);
    assert.equal(hooks.BeforeTool?.[0]?.hooks[0]?.command, 'node "/new/dist/cli.js" hook gemini');
    assert.equal(hooks.BeforeTool?.[0]?.hooks[0]?.timeout, 10_000);
  });

  it("recognises its own registration by the agent's whole id, not a prefix of another's", () => {
    assert.equal(isGuardianHook('node "/x/dist/cli.js" hook codex', 'codex'), true);
    assert.equal(isGuardianHook('loop-guardian hook codex --deny-with exit2', 'codex'), true);
    assert.equal(isGuardianHook('node "/x/dist/cli.js" hook codex-cloud', 'codex'), false);
    assert.equal(isGuardianHook('node "/x/dist/cli.js" hook claude', 'codex'), false);
    assert.equal(isGuardianHook('npx prettier hook codex', 'codex'), false);
  });

  it('Codex and Gemini CLI: their files, their events; a file that is not valid JSON is left alone with its line named', async () => {
    const ws = await tmpdir();
    assert.equal((await cli(['init', 'codex', '--workspace', ws])).code, 0);
    const codex = await read(ws, '.codex/hooks.json');
    // UserPromptSubmit refuses a run under STOP; Stop settles the turn's last call from the rollout.
    assert.deepEqual(Object.keys(codex.hooks), ['PreToolUse', 'PostToolUse', 'UserPromptSubmit', 'Stop']);
    assert.equal(codex.hooks.Stop?.[0]?.matcher, undefined);
    const broken = '{\n  "theme": "dark",\n  oops\n}\n';
    await write(ws, '.gemini/settings.json', broken);
    const r = await cli(['init', 'gemini', '--workspace', ws]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /\.gemini\/settings\.json: line 3, column \d+ is not valid JSON.*not changed/);
    assert.equal(await fs.readFile(path.join(ws, '.gemini/settings.json'), 'utf8'), broken);
    await write(ws, '.gemini/settings.json', JSON.stringify({ theme: 'dark', hooks: 'nope' }));
    assert.match((await cli(['init', 'gemini', '--workspace', ws])).stderr, /hooks is not an object/);
  });

  it('the registered command is a working hook', async () => {
    const ws = await tmpdir();
    await cli(['init', 'claude', '--workspace', ws]);
    await cli(['stop', '--workspace', ws]);
    const command = (await read(ws, '.claude/settings.local.json')).hooks.PreToolUse[0].hooks[0].command as string;
    const input = JSON.stringify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 'x' });
    const out = execFileSync('sh', ['-c', command], { input, cwd: ws, env: { ...process.env, CLAUDE_PROJECT_DIR: ws } }).toString();
    assert.match(out, /"permissionDecision":"deny"/);
    const prompt = (await read(ws, '.claude/settings.local.json')).hooks.UserPromptSubmit[0].hooks[0].command as string;
    const refused = execFileSync('sh', ['-c', prompt], { input: JSON.stringify({ session_id: 's', hook_event_name: 'UserPromptSubmit', prompt: 'go on' }), cwd: ws, env: { ...process.env, CLAUDE_PROJECT_DIR: ws } }).toString();
    assert.match(refused, /"decision":"block"/);
  });
});
