import { strict as assert } from 'node:assert';
import { clineTranscript } from '../../../src/agents/cline/transcript';
import { openHandsTranscript } from '../../../src/agents/openhands/transcript';
import { decode, halts, replayText } from './util';

describe('SWE-agent, OpenHands and Cline adapters', () => {
  it('SWE-agent: a trajectory repeating an action with the same observation halts; evidence names the steps\' lines', async () => {
    const step = (action: string, observation: string) => ({ action, observation, response: '', thought: '', state: '{}' });
    const doc = {
      environment: 'swe_main',
      trajectory: [step('ls\n', 'a.py'), step('python a.py\n', 'Traceback: ImportError'), step('python a.py\n', 'Traceback: ImportError'), step('python a.py\n', 'Traceback: ImportError')],
      history: [],
      info: { exit_status: 'submitted' },
    };
    const replay = await replayText('task.traj', JSON.stringify(doc, null, 2));
    assert.equal(replay.format, 'swe-agent');
    const halt = replay.findings.find((f) => f.signal === 'identical-calls');
    assert.equal(halt?.action, 'halt');
    assert.equal(halt?.subject, 'python a.py');
    const text = JSON.stringify(doc, null, 2).split('\n');
    for (const ref of halt?.evidence ?? []) assert.match(text[ref.line - 1] ?? '', /^\s*\{$/);
  });

  it('SWE-agent: a step without an action is skipped with its index', async () => {
    const replay = await replayText('t.traj', JSON.stringify({ trajectory: [{ observation: 'x' }, { action: 'ls', observation: 'a' }] }));
    assert.equal(replay.events, 1);
    assert.equal(replay.skippedLines[0]?.field, 'trajectory[0].action');
  });

  it('OpenHands: actions pair with observations by cause; error observations and non-zero exit codes fail', () => {
    const run = (id: number, command: string) => ({ id, timestamp: '2025-01-27T22:45:13.764487', source: 'agent', action: 'run', args: { command, thought: `try ${id}`, is_input: false }, tool_call_metadata: { function_name: 'execute_bash', tool_call_id: `t${id}` } });
    const obs = (cause: number, exit: number) => ({ id: cause + 1, timestamp: '2025-01-27T22:45:14', source: 'agent', cause, observation: 'run', content: 'No module named pytest', extras: { command: 'pytest', metadata: { exit_code: exit } } });
    const { events, skipped } = decode(openHandsTranscript, [
      { id: 0, source: 'user', action: 'message', message: 'run the tests', args: { content: 'run the tests' } },
      run(1, 'pytest'),
      obs(1, 1),
      run(3, 'pytest'),
      { id: 4, source: 'agent', cause: 3, observation: 'error', content: 'sandbox timeout', extras: {} },
      run(5, 'pytest'),
      obs(5, -1),
      { id: 7, source: 'environment', observation: 'agent_state_changed', content: '', extras: { agent_state: 'running' } },
      { id: 8, source: 'agent', mystery: true },
    ]);
    assert.deepEqual(
      events.map((x) => (x.event.type === 'tool' ? `tool ${x.event.tool} ${x.event.id}` : x.event.type === 'tool_result' ? `result ${x.event.id} ${String(x.event.ok)}` : x.event.type)),
      ['user', 'prompt', 'tool execute_bash 1', 'result 1 false', 'tool execute_bash 3', 'result 3 false', 'tool execute_bash 5', 'result 5 true'],
    );
    const call = events[2]?.event;
    assert.ok(call?.type === 'tool');
    // The thought differs each time and is not part of the call.
    assert.deepEqual(call.args, { command: 'pytest' });
    assert.deepEqual(skipped.map((s) => `${s.line} ${s.field}`), ['9 action']);
  });

  it('OpenHands: the same failing command three times halts', async () => {
    const events: unknown[] = [];
    for (let i = 0; i < 3; i++) {
      events.push({ id: i * 2 + 1, timestamp: `2025-01-27T22:45:1${i}`, source: 'agent', action: 'run', args: { command: 'make' }, tool_call_metadata: { function_name: 'execute_bash' } });
      events.push({ id: i * 2 + 2, timestamp: `2025-01-27T22:45:1${i}`, source: 'agent', cause: i * 2 + 1, observation: 'run', content: 'make: *** No rule to make target', extras: { metadata: { exit_code: 2 } } });
    }
    const replay = await replayText('trajectory.json', JSON.stringify(events, null, 1));
    assert.equal(replay.format, 'openhands');
    assert.ok(halts(replay).includes('identical-calls'));
  });

  it('Cline: is_error marks failures; the same failing tool use three times halts; the session comes from the file', async () => {
    const messages: unknown[] = [{ id: 'm0', role: 'user', content: [{ type: 'text', text: 'fix' }], ts: 1783376873000 }];
    for (let i = 1; i <= 3; i++) {
      messages.push({ id: `a${i}`, role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'run_commands', input: { commands: ['npm run build'] } }], ts: 1783376873000 + i * 1000 });
      messages.push({ id: `r${i}`, role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'error TS2304: Cannot find name', is_error: true }], ts: 1783376873500 + i * 1000 });
    }
    const replay = await replayText('session.messages.json', JSON.stringify({ version: 1, sessionId: 'sess_1', messages }, null, 2));
    assert.equal(replay.format, 'cline');
    const halt = replay.findings.find((f) => f.signal === 'identical-calls');
    assert.equal(halt?.action, 'halt');
    assert.equal(halt?.session, 'sess_1');
    const legacy = decode(clineTranscript, messages, messages);
    assert.equal(legacy.events.filter((e) => e.event.type === 'tool_result' && e.event.ok === false).length, 3);
  });

  it('a JSON document no adapter knows is an error that says to name the format', async () => {
    await assert.rejects(replayText('x.json', JSON.stringify({ hello: 'world' }, null, 2)), /cannot tell what wrote it.*--format/);
  });
});
