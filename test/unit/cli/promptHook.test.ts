import { strict as assert } from 'node:assert';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { cli, describeShared, FIXTURES, hookLogLines, runHook, tmpdir, write } from '../helpers';

/*
 * The prompt hook as the agents run it (issue 14): `dist/cli.js hook <agent>` as a child process,
 * the agent's JSON on stdin, its answer on stdout. STOP refuses prompts; the prompt that would be
 * the fifth identical one answered identically is refused with the reason; everything else passes.
 */

const claudePrompt = (prompt: string, transcript?: string, session = 'sess-p') => ({
  session_id: session,
  ...(transcript !== undefined ? { transcript_path: transcript } : {}),
  cwd: '/ignored',
  hook_event_name: 'UserPromptSubmit',
  prompt,
});

describe('the prompt hook (a real process)', function (this: Mocha.Suite) {
  this.timeout(120_000);

  it('STOP refuses a prompt in each agent that can refuse one, in its own answer; Copilot CLI, which cannot, is let through with a note and nothing recorded; PAUSE lets prompts through', async () => {
    const ws = await tmpdir();
    assert.equal((await cli(['stop', '--workspace', ws, '--reason', 'runaway costs'])).code, 0);
    const claude = await runHook(ws, 'claude', claudePrompt('continue'));
    assert.equal(claude.code, 0);
    const answer = JSON.parse(claude.stdout) as { decision: string; reason: string };
    assert.equal(answer.decision, 'block');
    assert.match(answer.reason, /STOP_ALL is set to STOP \(runaway costs.*Every tool call and prompt is refused/);
    // VS Code's Local harness, through the versioned Copilot hook file (its payload's common keys, ../shared/docs/vscode-agents.md 1.3): its own answer.
    const transcript = '/home/u/.config/Code/User/workspaceStorage/9d1/GitHub.copilot-chat/transcripts/vs-1.jsonl';
    const local = await runHook(ws, 'copilot-cli', { timestamp: '2026-10-02T09:14:03.101Z', hook_event_name: 'UserPromptSubmit', session_id: 'vs-1', transcript_path: transcript, cwd: ws, prompt: 'continue' });
    assert.deepEqual(Object.keys(JSON.parse(local.stdout) as object).sort(), ['continue', 'stopReason']);
    assert.equal((JSON.parse(local.stdout) as { continue: boolean }).continue, false);
    // Copilot CLI drops a prompt hook's output: refusing is impossible, so the prompt is let through and recorded.
    const copilot = await runHook(ws, 'copilot-cli', { sessionId: 'cp-1', timestamp: 1774039625016, cwd: ws, prompt: 'continue' });
    assert.equal(copilot.code, 0);
    assert.equal(copilot.stdout, '');
    assert.match(copilot.stderr, /cannot be refused here: Loop Guardian: STOP_ALL is set to STOP/);
    assert.equal((await cli(['pause', '--workspace', ws])).code, 0);
    const paused = await runHook(ws, 'claude', claudePrompt('continue'));
    assert.equal(paused.code, 0);
    assert.equal(paused.stdout, '');
    // Where it cannot refuse, the hook keeps no record of its own: the session is read from its own log.
    assert.equal((await runHook(ws, 'copilot-cli', { sessionId: 'cp-1', timestamp: 1774039625016, cwd: ws, prompt: 'continue' })).stdout, '');
    assert.deepEqual(await fs.readdir(path.join(ws, '.tmp', 'current', 'logs')), ['hook-claude-sess-p.jsonl']);
  });

  it('--deny-with exit2 refuses a prompt with exit code 2 and the reason on stderr', async () => {
    const ws = await tmpdir();
    await cli(['stop', '--workspace', ws]);
    const r = await cli(['hook', 'claude', '--workspace', ws, '--deny-with', 'exit2'], { input: JSON.stringify(claudePrompt('go')), cwd: ws });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /STOP_ALL is set to STOP/);
  });

  it('without a transcript to read the answers from, the same prompt six times is never refused: an unknown answer is no evidence', async () => {
    const ws = await tmpdir();
    for (let i = 0; i < 6; i++) assert.equal((await runHook(ws, 'claude', claudePrompt('run the job'))).stdout, '');
    assert.deepEqual((await hookLogLines(ws)).map((l) => l.type), Array(6).fill('prompt'));
  });

  it("VS Code Copilot's prompt through the shared `copilot-cli` entry is recorded as Copilot's, like its tool calls, not as the CLI's", async () => {
    const ws = await tmpdir();
    const payload = { timestamp: '2026-10-02T09:14:03.101Z', hook_event_name: 'UserPromptSubmit', session_id: 'vs-2', transcript_path: path.join(ws, 'vs-2.jsonl'), cwd: ws, prompt: 'continue' };
    assert.equal((await runHook(ws, 'copilot-cli', payload)).stdout, '');
    const tool = { ...payload, hook_event_name: 'PreToolUse', tool_name: 'read_file', tool_input: { filePath: 'a.ts' }, tool_use_id: 't1' };
    await runHook(ws, 'copilot-cli', tool);
    assert.deepEqual(await fs.readdir(path.join(ws, '.tmp', 'current', 'logs')), ['hook-copilot-vs-2.jsonl']);
    const lines = await hookLogLines(ws);
    assert.deepEqual(lines.map((l) => [l.type, l.agent]), [['prompt', 'copilot-vscode'], ['tool', 'copilot-vscode']]);
  });

  it('a configuration cached by an older version, without the new signals, is rebuilt rather than failing every call open', async () => {
    const ws = await tmpdir();
    await write(ws, '.github/guardian/config.json', JSON.stringify({ signals: { 'repeated-prompt': { threshold: 4 } } }));
    assert.equal((await runHook(ws, 'claude', claudePrompt('go'))).stderr, '');
    const cache = path.join(ws, '.tmp/guardian/hook-config.json');
    const cached = JSON.parse(await fs.readFile(cache, 'utf8')) as { config: { signals: Record<string, unknown> } };
    assert.deepEqual(cached.config.signals['repeated-prompt'], { enabled: true, threshold: 4, warnAt: 3 });
    for (const id of ['repeated-prompt', 'api-error-storm', 're-delegation']) delete cached.config.signals[id];
    await fs.writeFile(cache, JSON.stringify(cached));
    const r = await runHook(ws, 'claude', claudePrompt('go'));
    assert.equal(r.stderr, '', 'no fail-open note');
    const rebuilt = JSON.parse(await fs.readFile(cache, 'utf8')) as { config: { signals: Record<string, unknown> } };
    assert.deepEqual(rebuilt.config.signals['repeated-prompt'], { enabled: true, threshold: 4, warnAt: 3 });
  });

  it('fails open on broken state: a log folder that is a file lets the prompt through, said on stderr', async () => {
    const ws = await tmpdir();
    await write(ws, '.tmp/current/logs', 'not a folder');
    const r = await runHook(ws, 'claude', claudePrompt('go'));
    assert.equal(r.code, 0);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /fail-open/);
  });
});

describeShared('the prompt hook refusing an orchestration loop (a Claude Code transcript in the real shape)', 'the real transcripts', function (this: Mocha.Suite) {
  this.timeout(120_000);
  // A real session's records (ccviewer-1af7fc5e): a typed prompt and an assistant's text; each turn
  // of the test session is a copy of them with its own text, appended as Claude Code appends.
  const lines = readFileSync(path.join(FIXTURES, 'real', 'claude', 'ccviewer-1af7fc5e.jsonl'), 'utf8').split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>);
  const typed = lines.find((l) => l.type === 'user' && typeof l.message?.content === 'string') as Record<string, any>;
  const said = lines.find((l) => l.type === 'assistant' && Array.isArray(l.message?.content) && l.message.content.every((b: { type: string }) => b.type === 'text')) as Record<string, any>;
  let n = 0;
  const turn = (prompt: string, answer: string) => {
    n++;
    const user = { ...typed, uuid: `u-${n}`, message: { ...typed.message, content: prompt } };
    const assistant = { ...said, uuid: `a-${n}`, message: { ...said.message, id: `msg_${n}`, content: [{ type: 'text', text: answer }] } };
    return `${JSON.stringify(user)}\n${JSON.stringify(assistant)}\n`;
  };

  it('the fifth identical prompt after four identical answers is refused with the reason; a different prompt then goes through', async () => {
    const ws = await tmpdir();
    const transcript = path.join(ws, 'transcript.jsonl');
    await fs.writeFile(transcript, '');
    const cannot = 'I cannot make changes in plan mode. Exit plan mode to let me edit files.';
    for (let i = 1; i <= 4; i++) {
      const r = await runHook(ws, 'claude', claudePrompt('Implement the plan now.', transcript));
      assert.equal(r.stdout, '', `prompt ${i} passes`);
      await fs.appendFile(transcript, turn('Implement the plan now.', cannot));
    }
    const fifth = await runHook(ws, 'claude', claudePrompt('Implement the plan now.', transcript));
    const answer = JSON.parse(fifth.stdout) as { decision: string; reason: string };
    assert.equal(answer.decision, 'block');
    assert.match(answer.reason, /refused this prompt \(repeated-prompt, 5\/5\): The same prompt was sent 5 times in a row, each time after the same answer \("I cannot make changes in plan mode/);
    // Sent again, still refused: the refused prompt is recorded and got no answer.
    assert.equal((JSON.parse((await runHook(ws, 'claude', claudePrompt('Implement the plan now.', transcript))).stdout) as { decision: string }).decision, 'block');
    assert.equal((await runHook(ws, 'claude', claudePrompt('Exit plan mode, then implement the plan.', transcript))).stdout, '');
    const log = await hookLogLines(ws);
    assert.deepEqual(log.slice(0, 9).map((l) => l.type), ['prompt', 'reply', 'prompt', 'reply', 'prompt', 'reply', 'prompt', 'reply', 'prompt']);
    assert.equal(log[1]?.text, cannot);
    const guardianLog = await fs.readFile(path.join(ws, '.tmp/guardian/guardian.log'), 'utf8');
    assert.match(guardianLog, /\[WARN\] hook claude: refused a prompt in session sess-p/);
  });

  it('the prompt already written to the transcript when the hook runs: the answer compared is the one before it', async () => {
    const ws = await tmpdir();
    const transcript = path.join(ws, 'transcript.jsonl');
    await fs.writeFile(transcript, '');
    const cannot = 'I cannot make changes in plan mode.';
    const replies: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const [user, assistant] = turn('Implement the plan now.', cannot).trimEnd().split('\n');
      await fs.appendFile(transcript, `${user}\n`);
      replies.push((await runHook(ws, 'claude', claudePrompt('Implement the plan now.', transcript))).stdout);
      await fs.appendFile(transcript, `${assistant}\n`);
    }
    assert.deepEqual(replies.slice(0, 4), ['', '', '', '']);
    assert.equal((JSON.parse(replies[4] as string) as { decision: string }).decision, 'block');
  });

  it("the previous turn's failed requests are recorded from the transcript (the real retry records of slopometry-0f112eb4, lines 379-380), so a storm is seen in a session the hook records", async () => {
    const ws = await tmpdir();
    const transcript = path.join(ws, 'transcript.jsonl');
    const real = readFileSync(path.join(FIXTURES, 'real', 'claude', 'slopometry-0f112eb4.jsonl'), 'utf8').split('\n');
    const retries = [real[378], real[379]].map((l) => JSON.parse(l as string) as Record<string, any>);
    assert.deepEqual(retries.map((r) => [r.type, r.subtype, r.retryAttempt]), [['system', 'api_error', 1], ['system', 'api_error', 2]]);
    await fs.writeFile(transcript, '');
    for (let i = 1; i <= 4; i++) {
      assert.equal((await runHook(ws, 'claude', claudePrompt('try again', transcript))).stdout, '');
      // The turn: the person's prompt, the two automatic retries; no answer came.
      const [user] = turn('try again', '').split('\n');
      await fs.appendFile(transcript, `${user}\n${retries.map((r) => JSON.stringify(r)).join('\n')}\n`);
    }
    await runHook(ws, 'claude', claudePrompt('try again', transcript));
    const log = await hookLogLines(ws);
    assert.deepEqual(log.filter((l) => l.type === 'api_error').map((l) => [l.class, l.retry]), Array(4).fill([['ConnectionRefused', 1], ['ConnectionRefused', 2]]).flat());
    const scan = JSON.parse((await cli(['scan', '--workspace', ws, '--json'])).stdout) as { findings: { signal: string; action: string; count: number }[] };
    const storm = scan.findings.filter((f) => f.signal === 'api-error-storm');
    // A refused connection passes by itself: the storm warns (the same error 8 times), it does not halt.
    assert.deepEqual(storm.map((f) => f.action), ['warn']);
    assert.deepEqual(scan.findings.filter((f) => f.signal === 'repeated-prompt'), [], 'turns without an answer are no evidence of a prompt loop');
  });

  it('the same prompt whose answers change (a person saying "continue" through a long task) is never refused', async () => {
    const ws = await tmpdir();
    const transcript = path.join(ws, 'transcript.jsonl');
    await fs.writeFile(transcript, '');
    for (let i = 1; i <= 7; i++) {
      assert.equal((await runHook(ws, 'claude', claudePrompt('continue', transcript))).stdout, '', `prompt ${i} passes`);
      await fs.appendFile(transcript, turn('continue', `Done with step ${i}: updated module ${i} and its tests.`));
    }
  });
});
