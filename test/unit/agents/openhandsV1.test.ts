import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { cli, tmpdir } from '../helpers';

/*
 * OpenHands V1 conversations: one file per event under `<conversation>/events/` (shapes from
 * OpenHands/software-agent-sdk @611629e6: src/agents/openhands/v1.ts names the files), built here
 * from the models, read by `replay` given the folder.
 */
const uuid = (i: number) => `5b0c9f7e-8d2a-4c1e-9f3b-${String(i).padStart(12, '0')}`;
const at = (i: number) => `2026-08-22T16:35:${String(i).padStart(2, '0')}.481233`;

function action(i: number, command: string) {
  return { id: uuid(i), timestamp: at(i), source: 'agent', thought: [], thinking_blocks: [], action: { command, is_input: false, reset: false, kind: 'TerminalAction' }, tool_name: 'terminal', tool_call_id: `toolu_${i}`, tool_call: { id: `toolu_${i}`, name: 'terminal', arguments: JSON.stringify({ command, security_risk: i % 2 ? 'LOW' : 'MEDIUM' }), origin: 'completion' }, llm_response_id: `chatcmpl-${i}`, security_risk: 'LOW', kind: 'ActionEvent' };
}

function observation(i: number, call: number, text: string, exitCode: number) {
  return { id: uuid(i), timestamp: at(i), source: 'environment', tool_name: 'terminal', tool_call_id: `toolu_${call}`, observation: { content: [{ cache_prompt: false, type: 'text', text }], is_error: false, command: 'pytest -q', exit_code: exitCode, timeout: false, metadata: { exit_code: exitCode, pid: 4242 + i, prefix: '', suffix: '' }, kind: 'TerminalObservation' }, action_id: uuid(call), extended_content: [], kind: 'ObservationEvent' };
}

async function conversation(events: readonly (Record<string, unknown> | string)[]): Promise<string> {
  const dir = path.join(await tmpdir('lg-oh-v1-'), '0e4d7b1a3c554f0e8a6b91d2c3e4f5a6');
  await fs.mkdir(path.join(dir, 'events'), { recursive: true });
  await fs.writeFile(path.join(dir, 'base_state.json'), JSON.stringify({ id: '0e4d7b1a-3c55-4f0e-8a6b-91d2c3e4f5a6', execution_status: 'finished' }));
  for (const [i, e] of events.entries()) {
    if (e === 'gap') continue;
    await fs.writeFile(path.join(dir, 'events', `event-${String(i).padStart(5, '0')}-${uuid(i)}.json`), typeof e === 'string' ? e : JSON.stringify(e));
  }
  return dir;
}

describe('OpenHands V1 conversations (a folder of event files)', () => {
  it('replay FOLDER: a terminal command failing the same way three times (exit_code 1, is_error false) halts; evidence at each event index + 1; a missing and a corrupt event file are skipped, each said', async () => {
    const ws = await tmpdir('lg-oh-ws-');
    const events: (Record<string, unknown> | string)[] = [
      { id: uuid(0), timestamp: at(0), source: 'agent', system_prompt: { type: 'text', text: 'You are OpenHands agent' }, tools: [], kind: 'SystemPromptEvent' },
      { id: uuid(1), timestamp: at(1), source: 'user', llm_message: { role: 'user', content: [{ cache_prompt: false, type: 'text', text: 'Fix the failing test' }], thinking_blocks: [] }, activated_skills: [], extended_content: [], kind: 'MessageEvent' },
    ];
    for (let k = 0; k < 3; k++) {
      const n = events.length;
      events.push(action(n, 'pytest -q'), observation(n + 1, n, 'E   AssertionError: expected 4, got 3\n1 failed, 3 passed in 0.42s', 1));
    }
    events.push('gap', '{"id": "cut short');
    events.push({ id: uuid(10), timestamp: at(10), source: 'environment', key: 'execution_status', value: 'finished', kind: 'ConversationStateUpdateEvent' });
    const dir = await conversation(events);
    for (const target of [dir, path.join(dir, 'events')]) {
      const r = await cli(['replay', target, '--json', '--workspace', ws]);
      assert.equal(r.code, 1, r.stderr);
      const out = JSON.parse(r.stdout) as { format: string; events: number; skipped: number; findings: { signal: string; action: string; evidence: { line: number }[] }[] };
      assert.equal(out.format, 'openhands');
      assert.equal(out.skipped, 2, r.stderr);
      assert.match(r.stderr, /:9: \(event file\): no file for record 8/);
      assert.match(r.stderr, /:10: \(event file\): event-00009-.*not JSON/);
      const halt = out.findings.find((f) => f.signal === 'failing-call' && f.action === 'halt');
      assert.ok(halt, JSON.stringify(out.findings));
      assert.deepEqual(halt.evidence.map((e) => e.line), [3, 5, 7], 'each call at its event index + 1');
    }
  });

  it('an unknown tool (AgentErrorEvent, no action) and a rejected call are outcomes; commands whose results change are no loop', async () => {
    const ws = await tmpdir('lg-oh-ws-');
    const events: Record<string, unknown>[] = [];
    // Edit, test, round after round, the failures going down: work, not a loop.
    for (let k = 0; k < 3; k++) {
      const n = events.length;
      events.push(action(n, `sed -i 's/v${k}/v${k + 1}/' src/app.py`), observation(n + 1, n, '', 0));
      events.push(action(n + 2, 'pytest -q'), observation(n + 3, n + 2, `${3 - k} failed`, 1));
    }
    const n = events.length;
    events.push({ ...action(n, 'rm -rf /'), action: undefined }, { id: uuid(n + 1), timestamp: at(n + 1), source: 'environment', tool_name: 'terminal', tool_call_id: `toolu_${n}`, rejection_reason: 'User rejected the action', rejection_source: 'user', action_id: uuid(n), kind: 'UserRejectObservation' });
    events.push({ ...action(n + 2, 'x'), tool_name: 'browser' }, { id: uuid(n + 3), timestamp: at(n + 3), source: 'agent', tool_name: 'browser', tool_call_id: `toolu_${n + 2}`, error: "Tool 'browser' not found. Available: ['terminal']", classification: { kind: 'agent_action', retryable: true, user_action: 'retry' }, kind: 'AgentErrorEvent' });
    const r = await cli(['replay', await conversation(events), '--json', '--workspace', ws]);
    const out = JSON.parse(r.stdout) as { events: number; skipped: number; findings: { action: string }[] };
    assert.equal(out.skipped, 0, r.stderr);
    assert.equal(out.events, 16);
    assert.deepEqual(out.findings.filter((f) => f.action === 'halt'), []);
  });

  it('a folder that is no agent\'s transcript is still an error naming who reads folders', async () => {
    const r = await cli(['replay', await tmpdir('lg-empty-'), '--workspace', await tmpdir('lg-oh-ws-')]);
    assert.equal(r.code, 3);
    assert.match(r.stderr, /is a folder, not a log \(no agent's transcript folder: OpenHands/);
  });
});
