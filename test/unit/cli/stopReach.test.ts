import { strict as assert } from 'node:assert';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cli, hookLogLines, tmpdir, write } from '../helpers';

/*
 * Issue 36 point 4: STOP reaches every agent wherever it started. An agent started in a subfolder
 * names that subfolder (CLAUDE_PROJECT_DIR); `stop` may be run in a nested repository. The hook
 * and the commands find the same project.
 */

/** A project (its own git) with a subfolder and a nested repository, and a HOME of its own. */
async function project(): Promise<{ root: string; src: string; nested: string; env: NodeJS.ProcessEnv }> {
  const root = await tmpdir();
  const home = await tmpdir('lg-home-');
  await fs.mkdir(path.join(root, '.git'));
  const src = path.join(root, 'src');
  const nested = path.join(root, 'vendor', 'lib');
  await fs.mkdir(src, { recursive: true });
  await fs.mkdir(path.join(nested, '.git'), { recursive: true });
  return { root, src, nested, env: { HOME: home, LOOP_GUARDIAN_HOME: path.join(home, '.loop-guardian') } };
}

const pre = (id: string, cwd: string) => ({ session_id: 'sub', transcript_path: '/home/u/.claude/projects/p/sub.jsonl', cwd, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: `echo ${id}` }, tool_use_id: id });

describe('STOP reaches an agent wherever it started (issue 36 point 4)', () => {
  it('init marks the project (.github/guardian/, said); the hook of an agent started in src/ (CLAUDE_PROJECT_DIR=src) records into the project and is refused by its STOP', async () => {
    const { root, src, env } = await project();
    const init = await cli(['init', 'claude'], { cwd: src, env });
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, new RegExp(`In the project ${root}:`));
    assert.match(init.stdout, /Created \.github\/guardian\/: it marks the project/);
    assert.ok((await fs.stat(path.join(root, '.github', 'guardian'))).isDirectory());
    assert.doesNotMatch((await cli(['init', 'claude'], { cwd: root, env })).stdout, /Created \.github\/guardian/, 'made once');
    const hook = (id: string) => cli(['hook', 'claude'], { cwd: src, env: { ...env, CLAUDE_PROJECT_DIR: src }, input: JSON.stringify(pre(id, src)) });
    assert.equal((await hook('a')).stdout, '');
    assert.equal(existsSync(path.join(src, '.tmp')), false, 'nothing recorded in the subfolder');
    assert.equal((await hookLogLines(root)).length, 1);
    assert.equal((await cli(['stop', '--reason', 'from the root'], { cwd: root, env })).code, 0);
    const refused = await hook('b');
    assert.match(refused.stdout, /"permissionDecision":"deny"/);
    assert.match(refused.stdout, /from the root/);
  });

  it("the hook honours an enclosing project's STOP: an agent whose project is a nested repository with a guardian of its own", async () => {
    const { root, nested, env } = await project();
    await write(nested, '.github/guardian/STOP_ALL', 'CLEAR 2026-11-27T10:00:00Z\n');
    await write(root, '.github/guardian/STOP_ALL', 'STOP 2026-11-27T10:00:00Z\nreason: the whole repository\n');
    const r = await cli(['hook', 'claude'], { cwd: nested, env: { ...env, CLAUDE_PROJECT_DIR: nested }, input: JSON.stringify(pre('n', nested)) });
    assert.match(r.stdout, /"permissionDecision":"deny"/);
    assert.match(r.stdout, /the whole repository/);
  });

  it('stop run in a nested repository writes the enclosing project\'s STOP_ALL (found by its registration, as an older init left it), says which agents it reaches, and that the nested repository has no hook; status there shows that STOP; clear there lifts it', async () => {
    const { root, nested, env } = await project();
    assert.equal((await cli(['init', 'claude'], { cwd: root, env })).code, 0);
    // An older init: no .github/guardian.
    await fs.rm(path.join(root, '.github'), { recursive: true, force: true });
    const stop = await cli(['stop', '--reason', 'runaway'], { cwd: nested, env });
    assert.equal(stop.code, 0, stop.stderr);
    assert.match(stop.stdout, new RegExp(`STOP_ALL: STOP .* \\(runaway\\), in ${root}/\\.github/guardian/STOP_ALL`));
    assert.match(stop.stdout, /reaches \(their hooks read it before every call\): Claude Code/);
    assert.match(stop.stdout, new RegExp(`In the nested repository ${nested}: an agent started in it runs its hooks, not ${root}'s`));
    assert.match(stop.stdout, /None is hooked there: .* loop-guardian init <agent> --workspace vendor\/lib/);
    assert.equal(existsSync(path.join(nested, '.github')), false, 'nothing written in the nested repository');
    const status = JSON.parse((await cli(['status', '--json'], { cwd: nested, env })).stdout) as { workspace: string; stopAll: { status: string } };
    assert.deepEqual([status.workspace, status.stopAll.status], [root, 'STOP']);
    assert.equal((await cli(['clear'], { cwd: nested, env })).code, 0);
    assert.match(await fs.readFile(path.join(root, '.github/guardian/STOP_ALL'), 'utf8'), /^CLEAR/);
  });

  it('stop writes every guardian project on the path (a nested repository with its own STOP_ALL and its enclosing project), --json lists them', async () => {
    const { root, nested, env } = await project();
    await fs.mkdir(path.join(root, '.github', 'guardian'), { recursive: true });
    await write(nested, '.github/guardian/STOP_ALL', 'CLEAR 2026-11-27T10:00:00Z\n');
    const stop = await cli(['stop', '--json'], { cwd: nested, env });
    const out = JSON.parse(stop.stdout) as { workspace: string; status: string; projects: { workspace: string }[] };
    assert.equal(out.workspace, nested);
    assert.deepEqual(out.projects.map((p) => p.workspace), [nested, root]);
    for (const dir of [nested, root]) assert.match(await fs.readFile(path.join(dir, '.github/guardian/STOP_ALL'), 'utf8'), /^STOP/);
    // Named with --workspace: that project alone.
    await cli(['clear', '--workspace', nested], { cwd: nested, env });
    assert.match(await fs.readFile(path.join(root, '.github/guardian/STOP_ALL'), 'utf8'), /^STOP/);
    assert.match(await fs.readFile(path.join(nested, '.github/guardian/STOP_ALL'), 'utf8'), /^CLEAR/);
    // status in the nested project shows the enclosing STOP that holds for it.
    const status = await cli(['status'], { cwd: nested, env });
    assert.match(status.stdout, new RegExp(`and STOP in the enclosing ${root}.*: it holds for every agent here`));
  });

  it('Gemini CLI reads its hook only in the folder it starts in: init and status say so, with the fix', async () => {
    const { root, env } = await project();
    const init = await cli(['init', 'gemini'], { cwd: root, env });
    assert.match(init.stdout, /Gemini CLI runs this hook only when started in .* itself: .*`loop-guardian init gemini --workspace <subfolder>`/);
    assert.doesNotMatch((await cli(['init', 'claude'], { cwd: root, env })).stdout, /only when started in/);
    const status = await cli(['status'], { cwd: root, env });
    assert.match(status.stdout, /its hook runs only when Gemini CLI is started in .* itself: started in a subfolder it reads no hook/);
    assert.match(status.stdout, /→ start it in .*, or run `loop-guardian init gemini --workspace <subfolder>`/);
    // Untrusted, its hook does not run at all: STOP does not reach it, said; trusted, it reaches it at the root only.
    assert.match((await cli(['stop'], { cwd: root, env })).stdout, /cannot reach Gemini CLI: its hook does not run: .*trusted folder/);
    await write(env.HOME as string, '.gemini/trustedFolders.json', JSON.stringify({ [root]: 'TRUST_FOLDER' }));
    const stop = await cli(['stop'], { cwd: root, env });
    assert.match(stop.stdout, /reaches \(their hooks read it before every call\): Claude Code, Gemini CLI/);
    assert.match(stop.stdout, /Gemini CLI: only when started in .* itself: from a subfolder it runs no hook/);
  });
});
