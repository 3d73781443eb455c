import { strict as assert } from 'node:assert';
import { clineTranscript, textResultOutcome } from '../../../src/agents/cline/transcript';
import { callLevel, decode, halts, replayText } from './util';

/** Cline native tool calling: tool_use blocks, results back as user text (our own text, their shape). */
function nativeHistory(steps: readonly [string, string][]): unknown[] {
  const out: unknown[] = [{ role: 'user', content: [{ type: 'text', text: '<task>\nDeploy the app.\n</task>' }, { type: 'text', text: '<environment_details>\n# Current Mode\nACT MODE\n</environment_details>' }], ts: 1777073160000 }];
  steps.forEach(([command, result], i) => {
    out.push({ role: 'assistant', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'execute_command', input: { command, requires_approval: false }, call_id: `toolu_${i}` }], ts: 1777073161000 + i * 1000 });
    out.push({
      role: 'user',
      content: [
        { type: 'text', text: `[execute_command for '${command}'] Result:\n${result}` },
        { type: 'text', text: '<environment_details>\n# Current Time\nnow\n</environment_details>' },
      ],
      ts: 1777073161500 + i * 1000,
    });
  });
  return out;
}

const FAILED = 'Command failed with exit code 1.\nOutput:\nError: No configuration files';

describe('Cline: native tool calling and ui_messages.json', () => {
  it('reads the outcome of a text result: exit codes and tool errors', () => {
    assert.equal(textResultOutcome('Command executed successfully (exit code 0).\nOutput:\nok').ok, true);
    assert.equal(textResultOutcome(FAILED).ok, false);
    assert.equal(textResultOutcome('The tool execution failed with the following error:\n<error>\nENOENT\n</error>').ok, false);
    assert.equal(textResultOutcome('1 | import x').ok, true);
  });

  it('a "[tool] Result:" user block is the result of the waiting tool use, not a turn; its failure is a failure', () => {
    const { events, skipped } = decode(clineTranscript, nativeHistory([['terraform plan', FAILED], ['ls', 'Command executed successfully (exit code 0).\nOutput:\nmain.tf']]));
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      callLevel(events).map((e) => (e.event.type === 'tool_result' ? `result ${e.event.id} ${String(e.event.ok)}` : e.event.type === 'tool' ? `tool ${e.event.id}` : e.event.type)),
      ['user', 'tool toolu_0', 'result toolu_0 false', 'tool toolu_1', 'result toolu_1 true'],
    );
  });

  it('the same failing command three times halts (the results do not reset the counters); a healthy run does not', async () => {
    const looping = await replayText('api_conversation_history.json', JSON.stringify(nativeHistory([['terraform plan', FAILED], ['terraform plan', FAILED], ['terraform plan', FAILED]])));
    assert.equal(looping.format, 'cline');
    assert.ok(halts(looping).length > 0, JSON.stringify(looping.findings.map((f) => `${f.action} ${f.signal}`)));
    const ok = (s: string) => `Command executed successfully (exit code 0).\nOutput:\n${s}`;
    const healthy = await replayText('api_conversation_history.json', JSON.stringify(nativeHistory([['terraform init', ok('done')], ['terraform plan', FAILED], ['terraform plan -var-file=dev.tfvars', ok('Plan: 3 to add')]])));
    assert.deepEqual(halts(healthy), []);
  });

  /** A ui_messages.json (our own text, their shape): commands and file tools, results in the next request. */
  function ui(steps: readonly (['command', string, string] | ['tool', Record<string, unknown>, string])[]): unknown[] {
    let ts = 1770577372000;
    const out: unknown[] = [
      { ts: ts++, type: 'say', say: 'task', text: 'Write the parser.', images: [], files: [] },
      { ts: ts++, type: 'say', say: 'checkpoint_created' },
      { ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: '<task>\nWrite the parser.\n</task>', tokensIn: 10 }) },
    ];
    for (const [kind, what, result] of steps) {
      out.push({ ts: ts++, type: 'say', say: 'text', text: 'Next step.', partial: false });
      if (kind === 'command') {
        out.push({ ts: ts++, type: 'ask', ask: 'command', text: what, partial: true });
        out.push({ ts: ts++, type: 'ask', ask: 'command', text: what, commandCompleted: true });
        out.push({ ts: ts++, type: 'ask', ask: 'command_output', text: 'partial output' });
        out.push({ ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: `[execute_command for '${what}'] Result:\n${result}\n\n<environment_details>\nx\n</environment_details>` }) });
      } else {
        out.push({ ts: ts++, type: 'say', say: 'tool', text: JSON.stringify({ ...what, operationIsLocatedInWorkspace: true }) });
        out.push({ ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: `[${String(what.tool)} for '${String(what.path)}'] Result:\n${result}` }) });
      }
    }
    out.push({ ts: ts++, type: 'say', say: 'completion_result', text: 'Done.' });
    out.push({ ts: ts++, type: 'ask', ask: 'hologram', text: '' });
    return out;
  }

  it('ui_messages.json: tool asks are calls, their results come from the next request; a loop halts', async () => {
    const replay = await replayText('ui_messages.json', JSON.stringify(ui([['command', 'cargo check', FAILED], ['command', 'cargo check', FAILED], ['command', 'cargo check', FAILED]])));
    assert.equal(replay.format, 'cline');
    // The task, three calls and their results; and the turn-level events: the prompt, each step's and the completion's reply.
    assert.equal(replay.events, 1 + 3 * 2 + 1 + 3 + 1);
    assert.ok(halts(replay).length > 0, JSON.stringify(replay.findings.map((f) => `${f.action} ${f.signal}`)));
    assert.deepEqual(replay.skippedKinds.map((k) => `${k.count} ${k.field}: ${k.reason}`), ['1 [].ask: unknown ask kind "hologram"']);
  });

  it('ui_messages.json: a healthy run does not halt; file tools are named by their tool and arguments', async () => {
    const records = ui([
      ['tool', { tool: 'readFile', path: 'src/a.rs', content: '/w/src/a.rs' }, '1 | fn main() {}'],
      ['tool', { tool: 'editedExistingFile', path: 'src/a.rs', diff: '- a\n+ b' }, 'The content was successfully saved to src/a.rs.'],
      ['command', 'cargo check', 'Command executed successfully (exit code 0).'],
    ]);
    const { events } = decode(clineTranscript, records, records);
    const tools = events.map((e) => e.event).filter((e) => e.type === 'tool');
    assert.deepEqual(tools.map((t) => (t.type === 'tool' ? `${t.tool} ${JSON.stringify(t.args)}` : '')), [
      'readFile {"path":"src/a.rs","content":"/w/src/a.rs"}',
      'editedExistingFile {"path":"src/a.rs","diff":"- a\\n+ b"}',
      'execute_command {"command":"cargo check"}',
    ]);
    const replay = await replayText('ui_messages.json', JSON.stringify(records));
    assert.deepEqual(halts(replay), []);
    assert.equal(replay.events, 7 + 1 + 3 + 1);
  });
});
