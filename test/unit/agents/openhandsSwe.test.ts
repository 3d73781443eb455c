import { strict as assert } from 'node:assert';
import { openHandsTranscript } from '../../../src/agents/openhands/transcript';
import { decode, halts, jsonlText, replayText } from './util';

/** An older OpenHands history (arguments at the top level, no source, id or cause), in its shape, our own text. */
function olderHistory(codes: readonly string[], failing = true): unknown[] {
  const out: unknown[] = [{ content: 'Add a --verbose flag to the CLI.', images_urls: null, wait_for_response: false, action: 'message', action_risk: null }];
  for (const code of codes) {
    out.push({ code, thought: `Trying ${code}`, action: 'run_ipython', is_confirmed: 'confirmed', action_risk: null, kernel_init_code: 'from agentskills import *' });
    out.push({ content: failing ? 'NameError: name is not defined' : `ran ${code}`, code, observation: 'run_ipython' });
  }
  return out;
}

describe('OpenHands: older histories and evaluation output.jsonl', () => {
  it('older history: arguments come from the top level, so different calls differ; observations answer the call before them', () => {
    const { events, skipped } = decode(openHandsTranscript, [
      ...olderHistory(["open_file('cli.py')", "search_file('argparse')"], false),
      { command: 'pytest -q', thought: 'run the tests', keep_prompt: false, action: 'run', is_confirmed: 'confirmed', action_risk: null },
      { content: '2 failed', command_id: -1, command: 'pytest -q', exit_code: 1, observation: 'run' },
      { outputs: {}, thought: 'done', action: 'finish' },
    ]);
    assert.deepEqual(skipped, []);
    const calls = events.map((e) => e.event).filter((e) => e.type === 'tool');
    assert.deepEqual(
      calls.map((c) => (c.type === 'tool' ? [c.tool, JSON.stringify(c.args), String(c.ok)] : [])),
      [
        ['run_ipython', JSON.stringify({ code: "open_file('cli.py')" }), 'true'],
        ['run_ipython', JSON.stringify({ code: "search_file('argparse')" }), 'true'],
        ['run', JSON.stringify({ command: 'pytest -q' }), 'false'],
      ],
    );
  });

  it('older history: the same failing code three times halts; three different calls do not', async () => {
    const looping = await replayText('history.json', JSON.stringify(olderHistory(['edit()', 'edit()', 'edit()']), null, 2));
    assert.equal(looping.format, 'openhands');
    assert.ok(halts(looping).length > 0, JSON.stringify(looping.findings.map((f) => f.signal)));
    const healthy = await replayText('history.json', JSON.stringify(olderHistory(['open()', 'scroll()', 'edit()'], false), null, 2));
    assert.equal(healthy.format, 'openhands');
    assert.equal(healthy.events, 3);
    assert.deepEqual(halts(healthy), []);
  });

  it('an editor observation starting "ERROR:" is a failure', () => {
    const { events } = decode(openHandsTranscript, [
      { id: 1, source: 'agent', action: 'edit', args: { path: '/w/a.c', command: 'str_replace', old_str: 'x' }, tool_call_metadata: { function_name: 'str_replace_editor' } },
      { id: 2, source: 'agent', cause: 1, observation: 'edit', content: 'ERROR:\nNo replacement was performed, old_str `x` did not appear verbatim.', extras: {} },
      { id: 3, source: 'agent', action: 'read', args: { path: '/w/a.c' } },
      { id: 4, source: 'agent', cause: 3, observation: 'read', content: 'int main() {}', extras: {} },
    ]);
    const results = events.map((e) => e.event).filter((e) => e.type === 'tool_result');
    assert.deepEqual(results.map((r) => (r.type === 'tool_result' ? r.ok : undefined)), [false, true]);
  });

  /** An evaluation output.jsonl: one instance per line, each with its history. */
  function instance(id: string, commands: readonly string[], exit: number): Record<string, unknown> {
    const history: unknown[] = [{ id: 0, source: 'user', action: 'message', message: `Fix ${id}`, args: { content: `Fix ${id}` } }];
    commands.forEach((command, i) => {
      history.push({ id: i * 2 + 1, source: 'agent', action: 'run', args: { command }, tool_call_metadata: { function_name: 'execute_bash' } });
      history.push({ id: i * 2 + 2, source: 'agent', cause: i * 2 + 1, observation: 'run', content: exit ? 'make: *** [all] Error 2' : 'ok', extras: { metadata: { exit_code: exit } } });
    });
    return { instance_id: id, instruction: `Fix ${id}`, metadata: {}, history, metrics: {}, error: null, test_result: {} };
  }

  it('output.jsonl: each instance is a session named by its instance_id; a looping instance halts, a healthy one does not', async () => {
    const text = jsonlText([instance('repo__a-1', ['make', 'make', 'make'], 2), instance('repo__b-2', ['ls', 'make', 'make test'], 0)]);
    const replay = await replayText('output.jsonl', text);
    assert.equal(replay.format, 'openhands');
    // Per instance: the task (user, prompt) and three calls with their results.
    assert.equal(replay.events, 2 * 8);
    assert.equal(replay.skipped, 0);
    const halted = replay.findings.filter((f) => f.action === 'halt');
    assert.ok(halted.length > 0);
    assert.deepEqual([...new Set(halted.map((f) => f.session))], ['repo__a-1']);
    assert.ok(halted.every((f) => f.at.line === 1));
  });

  it('output.jsonl: an instance without a history, and unknown records inside one, are counted', async () => {
    const bad = instance('repo__c-3', ['ls'], 0);
    (bad.history as unknown[]).push({ id: 9, source: 'agent', mystery: 1 });
    const replay = await replayText('output.jsonl', jsonlText([bad, { instance_id: 'repo__d-4', error: 'agent crashed' }]));
    assert.equal(replay.format, 'openhands');
    assert.deepEqual(replay.skippedLines.map((s) => `${s.line} ${s.field}`), ['1 history[3].action', '2 history']);
  });
});

describe('SWE-agent: trajectories that carry only their history', () => {
  const call = (name: string, args: Record<string, unknown>, id: string) => ({
    role: 'assistant',
    content: `I will run ${name}.`,
    thought: `I will run ${name}.`,
    action: `${name} ${Object.values(args).join(' ')}`,
    agent: 'main',
    tool_calls: [{ function: { name, arguments: JSON.stringify(args) }, id, type: 'function' }],
    message_type: 'action',
  });
  const obs = (content: string, id: string) => ({ role: 'tool', content, agent: 'main', message_type: 'observation', tool_call_ids: [id] });
  const doc = (steps: [string, Record<string, unknown>, string][]) => ({
    history: [
      { role: 'system', content: 'You are a programmer.', agent: 'main', message_type: 'system_prompt' },
      { role: 'user', content: 'Fix the failing test.', agent: 'main', message_type: 'observation' },
      ...steps.flatMap(([name, args, out], i) => [call(name, args, `c${i}`), obs(out, `c${i}`)]),
    ],
  });

  it('a history repeating the same call with the same observation halts', async () => {
    const replay = await replayText('run.traj', JSON.stringify(doc([['bash', { command: 'pytest' }, 'E   ImportError'], ['bash', { command: 'pytest' }, 'E   ImportError'], ['bash', { command: 'pytest' }, 'E   ImportError']]), null, 2));
    assert.equal(replay.format, 'swe-agent');
    assert.equal(replay.events, 3);
    assert.ok(halts(replay).includes('identical-calls'), JSON.stringify(replay.findings.map((f) => f.signal)));
  });

  it('a healthy history does not halt; names and arguments come from the function calls', async () => {
    const replay = await replayText('run.traj', JSON.stringify(doc([['find_file', { file_name: 'a.py' }, 'Found 1'], ['open', { path: 'a.py' }, '[File: a.py]'], ['submit', {}, 'diff --git']]), null, 2));
    assert.equal(replay.format, 'swe-agent');
    assert.equal(replay.events, 3);
    assert.equal(replay.skipped, 0);
    assert.deepEqual(halts(replay), []);
  });

  it('an unknown role is counted; demonstration messages are not read', async () => {
    const d = doc([['ls', {}, 'a.py']]);
    d.history.push({ role: 'critic', content: '?', agent: 'main', message_type: 'observation' } as never);
    d.history.splice(2, 0, { ...call('rm', { path: '/' }, 'demo'), is_demo: true } as never);
    const replay = await replayText('run.traj', JSON.stringify(d, null, 2));
    assert.equal(replay.events, 1);
    assert.equal(replay.skipped, 1);
    assert.equal(replay.skippedLines[0]?.field, 'history[5].role');
  });
});
