import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { hookOutcomes, outcomeWords, readHookOutcomes } from '../../../src/state/hookOutcomes';
import { Workspace } from '../../../src/state/workspace';
import { lineText, sourcePlaces } from '../../../src/core/sourceLocation';
import { cli, tmpProject, write } from '../helpers';

describe('what the hook did, from the guardian log (issue 33)', () => {
  it('counts the real hook\'s refusals of a Claude Code loop and sees that it ended the run', async () => {
    const ws = await tmpProject('lg-outcome-');
    await write(ws, '.github/guardian/config.json', '{}\n');
    const pre = (id: string) => ({ session_id: 'sess-1', cwd: ws, hook_event_name: 'PreToolUse', tool_name: 'Edit', tool_input: { file_path: path.join(ws, 'src/a.ts'), old_string: 'x', new_string: 'y' }, tool_use_id: id });
    const env = { CLAUDE_PROJECT_DIR: ws };
    for (const id of ['e1', 'e2']) {
      await cli(['hook', 'claude'], { cwd: ws, env, input: JSON.stringify(pre(id)) });
      await cli(['hook', 'claude'], { cwd: ws, env, input: JSON.stringify({ ...pre(id), hook_event_name: 'PostToolUseFailure', error: 'String to replace not found in file.' }) });
    }
    // The third is refused (the model is told why); asked for again, refused, and the run ended.
    for (const id of ['e3', 'e4']) assert.match((await cli(['hook', 'claude'], { cwd: ws, env, input: JSON.stringify(pre(id)) })).stdout, /deny/);
    let outcomes = await readHookOutcomes(new Workspace(ws));
    for (let i = 0; i < 20 && outcomes.size === 0; i++) {
      await new Promise((res) => setTimeout(res, 100));
      outcomes = await readHookOutcomes(new Workspace(ws));
    }
    const o = outcomes.get('claude:sess-1');
    assert.ok(o, `an outcome for the session: ${JSON.stringify([...outcomes])}`);
    assert.equal(o.refused, 2);
    assert.equal(o.ended, true);
    assert.equal(o.lastWhat, 'Edit');
    assert.equal(outcomeWords(o, 'Claude Code'), "Refused 2 calls; Claude Code's run ended");
    assert.equal(outcomeWords({ ...o, refused: 1, ended: false }, 'Claude Code'), 'Refused 1 call; Claude Code was told why');
  });

  it('tells a refusal that left the run going, and one that could not be given, from one that ended it', () => {
    const out = hookOutcomes([
      '[2026-01-01T00:00:00.000Z] [WARN] hook gemini: refused run_shell_command in session g1 (the run goes on: gemini does not end it from its BeforeTool hook for run_shell_command; the model is asked to end its turn): Loop: x',
      '[2026-01-01T00:00:01.000Z] [WARN] hook gemini: refused run_shell_command in session g1 (the run goes on: gemini does not end it from its BeforeTool hook for run_shell_command; the model is asked to end its turn): Loop: x',
      '[2026-01-01T00:00:02.000Z] [WARN] hook codex: would refuse a prompt in session c1, but this agent cannot refuse a prompt: STOP',
      '[2026-01-01T00:00:03.000Z] [INFO] something else',
      'a torn line',
    ]);
    const g = out.get('gemini:g1');
    assert.equal(g?.refused, 2);
    assert.equal(g?.ended, false);
    assert.match(outcomeWords(g!, 'Gemini CLI'), /^Refused 2 calls; Gemini CLI's run went on/);
    assert.equal(out.get('codex:c1')?.refused, 0);
    assert.match(outcomeWords(out.get('codex:c1')!, 'Codex CLI'), /^Could not refuse/);
  });
});

describe('the source file a loop is about (issue 33)', () => {
  it('finds tsc, gcc-style and Python places, then a call\'s target, in a log line\'s words', () => {
    const line = JSON.stringify({ type: 'tool', tool: 'Bash', args: { command: 'npm run build' }, error: "npm error\nsrc/range.ts(3,10): error TS2304: Cannot find name 'clamp'.\nlib/x.c:12:5: error: y" });
    assert.deepEqual(sourcePlaces(lineText(line)).slice(0, 2), [
      { path: 'src/range.ts', line: 3, column: 10 },
      { path: 'lib/x.c', line: 12, column: 5 },
    ]);
    assert.deepEqual(sourcePlaces('Traceback:\n  File "app/models.py", line 42, in f')[0], { path: 'app/models.py', line: 42 });
    const edit = JSON.stringify({ tool_input: { file_path: '/w/src/a.ts', old_string: 'x' } });
    assert.deepEqual(sourcePlaces(lineText(edit))[0], { path: '/w/src/a.ts' });
    // An escaped line break is not part of a path.
    assert.ok(sourcePlaces(lineText(JSON.stringify({ e: 'failed\nsrc/b.ts:1' }))).every((p) => !p.path.startsWith('n')));
  });
});
