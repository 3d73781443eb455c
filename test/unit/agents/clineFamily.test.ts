import { strict as assert } from 'node:assert';
import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { environmentFolder, xmlToolCalls } from '../../../src/agents/clineFamily';
import { kiloTranscript } from '../../../src/agents/kilo/transcript';
import { rooTranscript } from '../../../src/agents/roo/transcript';
import { clineTranscript } from '../../../src/agents/cline/transcript';
import { defaultConfig } from '../../../src/core/config';
import { replayFile } from '../../../src/watch/replay';
import { describeShared, FIXTURES } from '../helpers';
import { decode as decodeAll, halts, replayText } from './util';

/** The turn-level events (prompts, replies, failed requests, subtasks) have tests of their own (turnEvents.test.ts): these look at calls and turns. */
const TURN_LEVEL = new Set(['prompt', 'reply', 'api_error', 'delegation', 'delegation_result']);
const decode = (...args: Parameters<typeof decodeAll>) => {
  const out = decodeAll(...args);
  return { ...out, events: out.events.filter((e) => !TURN_LEVEL.has(e.event.type)) };
};

/*
 * Documents written from the documented shapes (our own text, their shape): Cline's and Roo's
 * `api_conversation_history.json` with XML-tag calls and `[tool for '…'] Result:` texts, Roo's
 * native `tool_use` / `tool_result` blocks and JSON errors, Roo's ui file opening with
 * `say: "text"`; and the real Roo Code files of ../shared/fixtures/real/roo.
 */

const env = (heading: string, cwd: string) => `<environment_details>\n# VSCode Visible Files\nsrc/a.ts\n\n# Current Time\n2026-10-02T09:14:03Z\n\n# ${heading} (${cwd}) Files\nsrc/\npackage.json\n</environment_details>`;

/** An XML-tag task: each step is an assistant message with one call and the user message with its result (head and output in one block, or apart as Roo writes them). */
function xmlHistory(heading: string, steps: readonly { call: string; head: string; result: string; apart?: boolean }[]): unknown[] {
  let ts = 1777073160000;
  const out: unknown[] = [{ role: 'user', ts: ts++, content: [{ type: 'text', text: '<task>\nMake the tests pass.\n</task>' }, { type: 'text', text: env(heading, '/home/u/proj') }] }];
  for (const s of steps) {
    out.push({ role: 'assistant', ts: ts++, content: [{ type: 'text', text: `<thinking>\nRun it again.\n</thinking>\n\n${s.call}` }] });
    const head = `[${s.head}] Result:`;
    const result = s.apart ? [{ type: 'text', text: head }, { type: 'text', text: s.result }] : [{ type: 'text', text: `${head}\n${s.result}` }];
    out.push({ role: 'user', ts: ts++, content: [...result, { type: 'text', text: '<environment_details>\n# Current Time\n2026-10-02T09:15:00Z\n</environment_details>' }] });
  }
  return out;
}

const npmTest = '<execute_command>\n<command>npm test -- --grep "[A-Z]+"</command>\n</execute_command>';
const FAILED_ROO = "Command executed in terminal within working directory '/home/u/proj'. Command execution was not successful, inspect the cause and adjust as needed.\nExit code: 1\nOutput:\nError: Cannot find module './config'";
const FAILED_CLINE = 'Command failed with exit code 1.\nOutput:\nError: Cannot find module \'./config\'';

describe('Cline family: Cline, Roo Code, Kilo Code task files', () => {
  it('reads XML-tag calls in the assistant text, with their parameters; other tags and unclosed calls are not calls', () => {
    const calls = xmlToolCalls('I will look first.\n<thinking>\nwhich file?\n</thinking>\n<read_file>\n<path>src/a.ts</path>\n</read_file>\n\nthen\n<write_to_file>\n<path>b.ts</path>\n<content>\n<div>x</div>\n</content>\n<line_count>1</line_count>\n</write_to_file>\n<execute_command>\n<command>never closed');
    assert.deepEqual(calls, [
      { tool: 'read_file', args: { path: 'src/a.ts' } },
      { tool: 'write_to_file', args: { path: 'b.ts', content: '<div>x</div>', line_count: '1' } },
    ]);
    assert.deepEqual(xmlToolCalls('<use_mcp_tool>\n<server_name>db</server_name>\n<tool_name>query</tool_name>\n<arguments>\n{"sql": "select 1"}\n</arguments>\n</use_mcp_tool>'), [
      { tool: 'use_mcp_tool', args: { server_name: 'db', tool_name: 'query', arguments: { sql: 'select 1' } } },
    ]);
  });

  it('Roo Code (XML tags, result heads in blocks of their own, a bracket in the command): each result answers its call; the same failing command three times halts', async () => {
    const step = { call: npmTest, head: 'execute_command for \'npm test -- --grep "[A-Z]+"\'', result: FAILED_ROO, apart: true };
    const records = xmlHistory('Current Workspace Directory', [step, step, step]);
    const { events, skipped } = decode(rooTranscript, records, records);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      events.map((e) => (e.event.type === 'tool_result' ? `result ${String(e.event.ok)}` : e.event.type === 'tool' ? `tool ${e.event.tool} ${JSON.stringify(e.event.args)}` : e.event.type)),
      ['user', ...Array(3).fill(['tool execute_command {"command":"npm test -- --grep \\"[A-Z]+\\""}', 'result false']).flat()],
    );
    const ids = events.map((e) => (e.event.type === 'tool' || e.event.type === 'tool_result' ? e.event.id : undefined)).filter((id) => id !== undefined);
    assert.deepEqual(ids, [ids[0], ids[0], ids[2], ids[2], ids[4], ids[4]], 'each result carries its own call\'s id');
    const replay = await replayText('api_conversation_history.json', JSON.stringify(records));
    assert.equal(replay.format, 'roo');
    assert.ok(halts(replay).length > 0, JSON.stringify(replay.findings.map((f) => `${f.action} ${f.signal}`)));
    assert.equal(replay.findings[0]?.agent, 'roo-code');
  });

  it('Cline (XML tags, "Current Working Directory"): read as Cline; a healthy run does not halt', async () => {
    const ok = 'Command executed.\nOutput:\n3 passing';
    const records = xmlHistory('Current Working Directory', [
      { call: '<read_file>\n<path>src/a.ts</path>\n</read_file>', head: "read_file for 'src/a.ts'", result: 'export const a = 1;' },
      { call: npmTest, head: "execute_command for 'npm test'", result: FAILED_CLINE },
      { call: '<replace_in_file>\n<path>src/a.ts</path>\n<diff>\n-a\n+b\n</diff>\n</replace_in_file>', head: "replace_in_file for 'src/a.ts'", result: 'The content was successfully saved to src/a.ts.' },
      { call: npmTest, head: "execute_command for 'npm test'", result: ok },
    ]);
    const replay = await replayText('api_conversation_history.json', JSON.stringify(records));
    assert.equal(replay.format, 'cline');
    // The person's turn (`user`, `prompt`), and each step's call, result and the assistant's text (`reply`, issue 14).
    assert.equal(replay.events, 2 + 4 * 3);
    assert.deepEqual(halts(replay), []);
  });

  it('a call left unanswered when the task was interrupted keeps an unknown outcome: the next result answers the next call', () => {
    const records = [
      { role: 'user', ts: 1, content: [{ type: 'text', text: '<task>\nsplit the work\n</task>' }] },
      { role: 'assistant', ts: 2, content: [{ type: 'text', text: '<new_task>\n<mode>code</mode>\n<message>do A</message>\n</new_task>' }] },
      { role: 'user', ts: 3, content: [{ type: 'text', text: '[TASK RESUMPTION] This task was interrupted.\n\nNew instructions for task continuation:\n<user_message>\ngo on\n</user_message>' }] },
      { role: 'assistant', ts: 4, content: [{ type: 'text', text: '<update_todo_list>\n<todos>\n[x] A\n</todos>\n</update_todo_list>' }] },
      { role: 'user', ts: 5, content: [{ type: 'text', text: '[update_todo_list] Result:' }, { type: 'text', text: 'Todo list updated successfully.' }] },
    ];
    const { events } = decode(rooTranscript, records, records);
    const todo = events.find((e) => e.event.type === 'tool' && e.event.tool === 'update_todo_list')?.event;
    const result = events.find((e) => e.event.type === 'tool_result')?.event;
    assert.ok(todo?.type === 'tool' && result?.type === 'tool_result');
    assert.equal(result.id, todo.id);
    assert.deepEqual(events.map((e) => e.event.type), ['user', 'tool', 'user', 'tool', 'tool_result']);
  });

  it("Roo Code native calls: tool_result blocks pair by id; is_error, Roo's JSON error and a non-zero exit code are failures", () => {
    const records = [
      { role: 'user', ts: 1, content: [{ type: 'text', text: '<task>\nfix it\n</task>' }, { type: 'text', text: env('Current Workspace Directory', '/p') }] },
      {
        role: 'assistant',
        ts: 2,
        content: [
          { type: 'text', text: 'Reading, then testing. <execute_command> in prose is no call.' },
          { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.ts' } },
          { type: 'tool_use', id: 'toolu_2', name: 'execute_command', input: { command: 'npm test' } },
          { type: 'tool_use', id: 'toolu_3', name: 'apply_diff', input: { path: 'a.ts', diff: 'x' } },
        ],
      },
      {
        role: 'user',
        ts: 3,
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '1 | const a = 1;' }] },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: FAILED_ROO },
          { type: 'tool_result', tool_use_id: 'toolu_3', content: JSON.stringify({ status: 'error', message: 'The tool execution failed', error: 'No match found' }) },
          { type: 'text', text: env('Current Workspace Directory', '/p') },
        ],
      },
      { role: 'assistant', ts: 4, isSummary: true, content: 'Summary of the conversation so far.' },
      { role: 'assistant', ts: 5, content: [{ type: 'tool_use', id: 'toolu_4', name: 'list_files', input: { path: '.' } }] },
      { role: 'user', ts: 6, content: [{ type: 'tool_result', tool_use_id: 'toolu_4', content: 'Skipping tool list_files due to user rejecting a previous tool.', is_error: true }] },
    ];
    const { events, skipped } = decode(rooTranscript, records, records);
    assert.deepEqual(skipped, []);
    assert.deepEqual(
      events.map((e) => (e.event.type === 'tool_result' ? `${e.event.id} ${String(e.event.ok)}` : e.event.type === 'tool' ? `${e.event.id} ${e.event.tool}` : e.event.type)),
      ['user', 'toolu_1 read_file', 'toolu_2 execute_command', 'toolu_3 apply_diff', 'toolu_1 true', 'toolu_2 false', 'toolu_3 false', 'toolu_4 list_files', 'toolu_4 false'],
    );
  });

  it("Roo Code's ui file opens with say \"text\": the person's task, a turn; read as Roo's by --format auto", async () => {
    let ts = 1758821676913;
    const ui = [
      { ts: ts++, type: 'say', say: 'text', text: 'Collect the test data.' },
      { ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: '<task>\nCollect the test data.\n</task>' }) },
      { ts: ts++, type: 'say', say: 'text', text: 'I will list the folder.' },
      { ts: ts++, type: 'ask', ask: 'command', text: 'ls tasks' },
      { ts: ts++, type: 'say', say: 'api_req_started', text: JSON.stringify({ request: "[execute_command for 'ls tasks'] Result:\nCommand executed in terminal within working directory '/p'. Exit code: 0\nOutput:\na b\n\n<environment_details>\nx\n</environment_details>" }) },
    ];
    const { events } = decode(rooTranscript, ui, ui);
    assert.deepEqual(events.map((e) => e.event.type), ['user', 'tool', 'tool_result']);
    assert.equal(events[0]?.event.type === 'user' ? events[0].event.text : undefined, 'Collect the test data.');
    assert.equal(events[1]?.event.type === 'tool' ? events[1].event.id : undefined, `file-session:${ts - 2}`, 'a ui call is named by its message time');
    assert.equal((await replayText('ui_messages.json', JSON.stringify(ui))).format, 'roo');
    // Cline's ui file says "task": Cline's.
    assert.equal((await replayText('ui_messages.json', JSON.stringify([{ ...ui[0], say: 'task' }, ...ui.slice(1)]))).format, 'cline');
  });

  it('Kilo Code: its files have Roo\'s marks; --format kilo reads them as Kilo Code\'s', async () => {
    const step = { call: npmTest, head: "execute_command for 'npm test'", result: FAILED_ROO, apart: true };
    const text = JSON.stringify(xmlHistory('Current Workspace Directory', [step, step, step]));
    const kilo = await replayText('api_conversation_history.json', text, 'kilo');
    assert.equal(kilo.format, 'kilo');
    assert.equal(kilo.findings[0]?.agent, 'kilo-code');
    assert.ok(halts(kilo).length > 0);
    assert.equal((await replayText('api_conversation_history.json', text)).format, 'roo');
    assert.equal(kiloTranscript.agent, 'kilo-code');
    assert.equal(clineTranscript.agent, 'cline');
  });

  it("names the folder of a task's first request, in Cline's and Roo's words; a multi-root task's name and a quoted heading are not folders", () => {
    const doc = (heading: string, cwd: string) => JSON.stringify([{ role: 'user', ts: 1, content: [{ type: 'text', text: '<task>\nhi\n</task>' }, { type: 'text', text: env(heading, cwd) }] }]);
    assert.equal(environmentFolder(doc('Current Working Directory', '/home/u/my proj (copy)')), '/home/u/my proj (copy)');
    assert.equal(environmentFolder(doc('Current Workspace Directory', 'd:/dev/roo "x"')), 'd:/dev/roo "x"');
    assert.equal(environmentFolder(doc('Current Working Directory', 'Primary: api')), undefined);
    const quoted = JSON.stringify([{ role: 'user', content: [{ type: 'text', text: 'look at "<environment_details>\n# Current Working Directory (/elsewhere) Files"' }] }]);
    assert.equal(environmentFolder(quoted), undefined);
    assert.equal(environmentFolder(JSON.stringify(JSON.parse(doc('Current Workspace Directory', '/p')), null, 2)), '/p', 'pretty-printed too');
  });
});

describeShared('the real Roo Code task files', 'the real transcripts', () => {
  const dir = path.join(FIXTURES, 'real', 'roo');
  for (const f of readdirSync(dir).sort()) {
    it(`real/roo/${f}: read as Roo Code's, nothing skipped; its calls are read and each result answers a call read before it; no halt`, async () => {
      const r = await replayFile(path.join(dir, f), f, 'auto', defaultConfig());
      assert.equal(r.format, 'roo');
      assert.equal(r.skipped, 0);
      assert.deepEqual(halts(r), []);
      const { readAgentDocument } = await import('../../../src/watch/agentLog');
      const events: { type: string; id?: string }[] = [];
      await readAgentDocument(path.join(dir, f), f, rooTranscript, { event: (e) => events.push(e.event as { type: string; id?: string }), skipped: () => undefined });
      const calls = events.filter((e) => e.type === 'tool');
      const results = events.filter((e) => e.type === 'tool_result');
      assert.ok(calls.length >= 7, `${calls.length} calls`);
      assert.ok(results.length >= calls.length / 2, `${results.length} results for ${calls.length} calls`);
      const seen = new Set<string>();
      for (const e of events) {
        if (e.type === 'tool' && e.id !== undefined) seen.add(e.id);
        if (e.type === 'tool_result') assert.ok(e.id !== undefined && seen.has(e.id), `result ${e.id} answers no call read before it`);
      }
    });
  }
});
