import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { cursorSlug } from '../../../src/agents/cursor/discovery';
import { cursorArrayTranscript, cursorTranscript } from '../../../src/agents/cursor/transcript';
import { decode, halts, jsonlText, replayText } from './util';

/*
 * Cursor's agent transcripts, in the layouts found on disk (../shared/docs/vscode-agents.md,
 * sections 4 and 8; issue 25): built here from those descriptions, the real ones not being shared.
 */
const user = (text: string) => ({ role: 'user', message: { content: [{ type: 'text', text: `<user_query>\n${text}\n</user_query>` }] } });
const assistant = (...content: unknown[]) => ({ role: 'assistant', message: { content } });
const use = (name: string, input: unknown) => ({ type: 'tool_use', name, input });
const text = (t: string) => ({ type: 'text', text: t });

describe('Cursor agent transcripts', () => {
  it('agent-transcripts/<uuid>/<uuid>.jsonl: prompts, replies and calls without results are read, auto-detected; a turn_ended line is no problem', async () => {
    const lines = [user('Fix the login test'), assistant(text('Looking at it.'), use('Read', { path: 'src/login.ts' })), assistant(use('Shell', { command: 'npm test' })), { type: 'turn_ended', status: 'completed' }];
    const d = decode(cursorTranscript, lines);
    assert.deepEqual(d.skipped, []);
    assert.deepEqual(d.events.map((e) => e.event.type), ['user', 'prompt', 'reply', 'tool', 'tool']);
    assert.equal((d.events[1]?.event as { text?: string }).text, 'Fix the login test', 'the prompt without its tags');
    const r = await replayText('0b1c2d3e.jsonl', jsonlText(lines));
    assert.equal(r.format, 'cursor');
    assert.equal(r.events, 5);
    assert.equal(r.skipped, 0);
  });

  it('pairs a result without an id with the oldest call waiting for one', () => {
    const lines = [user('go'), assistant(use('Read', { path: 'a' })), assistant({ type: 'tool_result', content: 'first' }), assistant(use('Read', { path: 'b' }), use('Read', { path: 'c' })), assistant({ type: 'tool_result', content: 'b text' }, { type: 'tool_result', content: 'c text', is_error: true })];
    const d = decode(cursorTranscript, lines);
    const pairs = d.events.filter((e) => e.event.type === 'tool' || e.event.type === 'tool_result').map((e) => `${e.event.type}:${(e.event as { id?: string }).id ?? '-'}`);
    // The first call came before any result showed the transcript has them: read without waiting.
    assert.deepEqual(pairs, ['tool:-', 'tool:cursor-1', 'tool:cursor-2', 'tool_result:cursor-1', 'tool_result:cursor-2']);
  });

  it('an orchestrator re-sending the same prompt 18 times is flagged', async () => {
    const lines = Array.from({ length: 18 }, () => [user('Run the next step of the migration plan'), assistant(text('Nothing to do: the plan has no next step.'))]).flat();
    const r = await replayText('orchestrator.jsonl', jsonlText(lines));
    assert.ok(r.findings.some((f) => f.signal === 'repeated-prompt'), JSON.stringify(r.findings.map((f) => f.signal)));
  });

  it('a debug mode searching about 24 times for a log file that never appears, over five "Issue reproduced, please proceed" turns, warns and never halts', async () => {
    const lines: unknown[] = [];
    for (let turn = 0; turn < 5; turn++) {
      lines.push(user('Issue reproduced, please proceed.'));
      for (let k = 0; k < 5; k++) lines.push(assistant(text(`Checking for the debug log (${turn}.${k}).`), use('Glob', { glob_pattern: '**/debug-*.log', target_directory: '.cursor' })));
    }
    const r = await replayText('debug.jsonl', jsonlText(lines.slice(0, 5 * 6 - 1)));
    assert.deepEqual(halts(r), []);
    assert.ok(r.findings.length > 0, 'worth a warning');
    assert.ok(r.findings.some((f) => /not recorded|cannot be known/.test(f.message)), `says what cannot be known: ${r.findings.map((f) => f.message).join(' | ')}`);
  });

  it('agent-transcripts/<uuid>.json: an array of {role, text, toolCalls}, auto-detected, each entry its own place', async () => {
    const doc = [
      { role: 'user', text: 'Add a README' },
      { role: 'assistant', text: 'Writing it.', toolCalls: [{ toolName: 'Write', args: { path: 'README.md', contents: '# x' } }] },
      { role: 'tool', text: 'ok' },
      { role: 'assistant', text: 'Done.' },
    ];
    const d = decode(cursorArrayTranscript, doc, doc);
    assert.deepEqual(d.events.map((e) => `${e.event.type}@${e.line}`), ['user@1', 'prompt@1', 'reply@2', 'tool@2', 'reply@4']);
    const r = await replayText('4f5e.json', JSON.stringify(doc, null, 2));
    assert.equal(r.format, 'cursor');
    assert.equal(r.skipped, 0);
  });

  it('finds a workspace\'s transcripts under its slug: every run of other characters one dash, no leading one', () => {
    assert.equal(cursorSlug('/home/u/my proj.v2'), 'home-u-my-proj-v2');
    assert.equal(cursorSlug(path.join('/', 'w')), 'w');
  });
});

describe('Cursor agent transcripts, flat text (agent-transcripts/<uuid>.txt)', () => {
  const txt = (blocks: string[]) => `${blocks.join('\n')}\n`;
  it('user: / assistant: / [Tool call] with its arguments / [Tool result] without output: read, auto-detected and by --format cursor; each call at its line', async () => {
    const text = txt([
      'user:',
      '<user_query>',
      'Fix the login test',
      '</user_query>',
      '',
      'assistant:',
      'Looking at the test first.',
      '[Tool call] Read',
      '  path: src/login.test.ts',
      '',
      '[Tool result] Read',
      '',
      'assistant:',
      '[Tool call] Shell',
      '  command: npm test -- login',
      '  working_directory: /home/u/proj',
      '[Tool result] Shell',
      'assistant:',
      'Done.',
    ]);
    for (const format of ['auto', 'cursor'] as const) {
      const r = await replayText('0b1c2d3e.txt', text, format);
      assert.equal(r.format, 'cursor');
      assert.equal(r.skipped, 0);
      assert.deepEqual(r.byType, { user: 1, prompt: 1, reply: 2, tool: 2, tool_result: 2 }, JSON.stringify(r.byType));
    }
  });

  it('the same command asked again and again, results unknown: warned, saying what cannot be known; halted only at twice the run', async () => {
    const round = ['assistant:', '[Tool call] Shell', '  command: npm run build-missing', '[Tool result] Shell'];
    const five = await replayText('loop.txt', txt(['user:', 'Build it', ...Array.from({ length: 5 }, () => round).flat()]));
    assert.deepEqual(halts(five), []);
    assert.ok(five.findings.some((f) => f.signal === 'identical-calls' && /cannot be known/.test(f.message)));
    const six = await replayText('loop.txt', txt(['user:', 'Build it', ...Array.from({ length: 6 }, () => round).flat()]));
    assert.ok(halts(six).includes('identical-calls'));
  });
});
