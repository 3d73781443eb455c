import * as assert from 'node:assert/strict';
import { apiErrorCause, DETERMINISTIC_CAUSES } from '../../../src/core/apiErrorCause';
import { proseKey } from '../../../src/core/canonical';
import { resolveConfig } from '../../../src/core/config';
import { config, only, run, times } from '../helpers';

/*
 * The turn-level signals of issue 14, on synthetic sessions: each rule with the neighbour that
 * must stay quiet. (The loops rebuilt from real transcripts are in test/unit/agents/turnLoops.test.ts.)
 */

const s = 's';
const user = (text: string) => ({ type: 'user', session: s, text });
const prompt = (text: string, from?: string) => ({ type: 'prompt', session: s, text, ...(from ? { from } : {}) });
const reply = (text: string) => ({ type: 'reply', session: s, text });
/** A person's turn as the readers write it: the `user` boundary, then the prompt. */
const turn = (text: string, answer?: string) => [user(text), prompt(text), ...(answer !== undefined ? [reply(answer)] : [])];
const apiError = (fields: Record<string, unknown>) => ({ type: 'api_error', session: s, ...fields });

describe('proseKey: what two sendings of the same message differ in is set aside', () => {
  it('ignores white space, case, timestamps, UUIDs, hashes and long numbers', () => {
    const a = 'Run the  build for request 3f2a9c1e-77b0-4c1d-9e2a-0b1c2d3e4f50 at 2026-03-20T20:47:00.120Z (job 1234567, commit 9367cf006be9)';
    const b = 'run the build for request 0a0b0c0d-1111-4222-8333-444455556666 at 2026-03-21T08:00:00Z\n(job 7654321, commit abc123def456)';
    assert.equal(proseKey(a), proseKey(b));
  });

  it('keeps what changes the request: short numbers, words, other ids of language', () => {
    assert.notEqual(proseKey('fix test 3'), proseKey('fix test 4'));
    assert.notEqual(proseKey('make the build pass'), proseKey('make the tests pass'));
    assert.equal(proseKey('Use python3 and utf-8'), 'use python3 and utf-8');
  });
});

describe('apiErrorCause: the likely cause of a failed model request', () => {
  const cases: Array<[Record<string, unknown>, string]> = [
    [{ status: 400, error: 'prompt is too long: 210000 tokens > 200000 maximum' }, 'context_size'],
    [{ status: 400, class: 'model_max_prompt_tokens_exceeded' }, 'context_size'],
    [{ status: 401, error: 'OAuth access token has expired' }, 'auth'],
    [{ error: 'OAI Compatible API error: [401] Authentication Error, LiteLLM Virtual Key expected' }, 'auth'],
    [{ status: 429, class: 'rate_limit', error: "You've hit your session limit · resets 9:50pm" }, 'quota'],
    [{ status: 429, error: 'Too Many Requests' }, 'rate_limit'],
    [{ status: 404, error: 'model: claude-x not found' }, 'model'],
    [{ status: 400, error: 'Bad Request' }, 'request_shape'],
    [{ status: 400 }, 'request_shape'],
    [{ status: 529, error: 'Overloaded' }, 'server'],
    [{ class: 'system_enotconn', error: 'Error: read ENOTCONN' }, 'network'],
    [{ error: 'something odd' }, 'unknown'],
  ];
  for (const [fields, cause] of cases) {
    it(`${JSON.stringify(fields)} → ${cause}`, () => assert.equal(apiErrorCause(fields), cause));
  }

  it('deterministic causes are the ones a retry meets again', () => {
    assert.deepEqual([...DETERMINISTIC_CAUSES].sort(), ['auth', 'context_size', 'model', 'quota', 'request_shape']);
  });
});

describe('repeated-prompt', () => {
  it('the same prompt answered the same way: warns at 3, halts at 5 (4 identical answers)', () => {
    const events = times(6, () => turn('Implement the plan', 'I cannot edit files in Ask mode.')).flat();
    const found = only(run(events).findings, 'repeated-prompt');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 3], ['halt', 5]]);
    assert.equal(found[1]?.evidence.length, 5);
    assert.match(found[1]?.message ?? '', /5 times in a row, each time after the same answer \("I cannot edit files in Ask mode\."\)/);
  });

  it('canonicalises the prompt: a new request id and time each sending is the same prompt', () => {
    const events = times(5, (i) => turn(`[2026-05-0${i + 1}T10:00:00Z] run job ${1_000_000 + i * 7919}`, 'Done: nothing to do.')).flat();
    assert.equal(only(run(events).findings, 'repeated-prompt').at(-1)?.action, 'halt');
  });

  it('a person rephrasing is no loop', () => {
    const asks = ['make the tests pass', 'please make the tests pass', 'the tests still fail, fix them', 'fix the failing tests', 'can you fix the tests?'];
    const events = asks.flatMap((a) => turn(a, 'I cannot run the tests here.'));
    assert.deepEqual(only(run(events).findings, 'repeated-prompt'), []);
  });

  it('a re-ask after a different answer starts over: five identical prompts with changing answers raise nothing', () => {
    const events = times(5, (i) => turn('continue', `Step ${i + 1} done: wrote part ${i + 1} of the report.`)).flat();
    assert.deepEqual(only(run(events).findings, 'repeated-prompt'), []);
  });

  it('the answer includes the calls: the same prompt with calls whose outcomes change is progress', () => {
    const events = times(6, (i) => [...turn('continue'), { type: 'tool', session: s, tool: 'bash', args: { command: 'npm test' }, ok: true, output: `${6 - i} failing` }]).flat();
    assert.deepEqual(only(run(events).findings, 'repeated-prompt'), []);
  });

  it('prompts whose turns show no answer (only failed requests) neither count nor break the run', () => {
    const events = [
      ...turn('go', 'Cannot act in this mode.'),
      ...turn('go', 'Cannot act in this mode.'),
      ...turn('go'),
      apiError({ status: 400, error: 'Bad Request' }),
      ...turn('go', 'Cannot act in this mode.'),
      ...turn('go', 'Cannot act in this mode.'),
      ...turn('go', 'Cannot act in this mode.'),
    ];
    const found = only(run(events).findings, 'repeated-prompt');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 3], ['halt', 5]]);
  });

  it('an empty prompt (an attachment alone) is left out', () => {
    const events = times(6, () => turn('', 'ok')).flat();
    assert.deepEqual(only(run(events).findings, 'repeated-prompt'), []);
  });

  it('names who sent it when the format says', () => {
    const events = times(3, () => [user('x'), prompt('sync now', 'hook'), reply('Nothing to sync.')]).flat();
    assert.match(only(run(events).findings, 'repeated-prompt')[0]?.message ?? '', /in a row by a hook/);
  });

  it('one finding per loop: the user events between the prompts do not end it', () => {
    const events = times(18, () => turn('Run the task', 'I cannot act in this mode.')).flat();
    const found = only(run(events).findings, 'repeated-prompt');
    assert.deepEqual(found.map((f) => f.action), ['warn', 'halt']);
  });
});

describe('api-error-storm', () => {
  it('the same deterministic error: warns at 3, halts at 5, recommendation names the cause', () => {
    const events = times(6, () => [user('hi'), prompt('hi'), apiError({ status: 400, class: 'invalid_request_error', error: 'messages.3: tool_use ids were found without tool_result blocks' })]).flat();
    const found = only(run(events).findings, 'api-error-storm');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 3], ['halt', 5]]);
    assert.match(found[1]?.recommendation ?? '', /request itself/);
    assert.equal(found[1]?.status, 'STALLED');
  });

  it('a transient error repeating only warns, however long, with the cause named', () => {
    const events = times(8, (i) => apiError({ status: 529, error: 'Overloaded', retry: i + 1 })).flat();
    const found = only(run(events).findings, 'api-error-storm');
    assert.deepEqual(found.map((f) => f.action), ['warn']);
    assert.match(found[0]?.recommendation ?? '', /overloaded/);
  });

  it('automatic retries past the budget: a halt when the cause stays (context size), whatever the messages say', () => {
    const events = times(11, (i) => apiError({ error: `Request too large (attempt ${i + 1}) ${'x'.repeat(i)}${i % 2 ? ' context length exceeded' : ' payload too large'}`, retry: i + 1 }));
    const found = only(run(events, config({ signals: { 'api-error-storm': { threshold: 50, warnAt: 50 } } })).findings, 'api-error-storm');
    assert.deepEqual(found.map((f) => [f.action, f.count, f.threshold]), [['halt', 11, 10]]);
    assert.match(found[0]?.message ?? '', /retried automatically 11 times/);
  });

  it('a retry that succeeds on the second try ends the run: no finding, and the next failure counts from 1', () => {
    const events = [
      ...times(3, () => [apiError({ status: 429, error: 'rate limited', retry: 1 }), reply('Here is the answer.')]).flat(),
      apiError({ status: 429, error: 'rate limited', retry: 1 }),
      { type: 'tool', session: s, tool: 'read', args: { path: 'a' }, ok: true, output: 'x' },
      apiError({ status: 429, error: 'rate limited', retry: 1 }),
    ];
    assert.deepEqual(only(run(events).findings, 'api-error-storm'), []);
  });

  it('different errors in a row are no same-error run', () => {
    const errors = ['Bad Request', 'Unauthorized', 'Not Found', 'Overloaded', 'Payment Required'];
    const events = errors.map((error, i) => apiError({ status: [400, 401, 404, 529, 402][i], error }));
    assert.deepEqual(only(run(events).findings, 'api-error-storm'), []);
  });
});

describe('re-delegation', () => {
  const delegate = (instruction: string, id: string, to = 'explore') => ({ type: 'delegation', session: s, instruction, to, id });
  const back = (id: string, output?: string) => ({ type: 'delegation_result', session: s, id, ok: true, ...(output !== undefined ? { output } : {}) });

  it('the same instruction delegated again after it came back with the same result: warns at 2, halts at 3', () => {
    const events = times(3, (i) => [delegate('Find where the config is parsed', `t${i}`), back(`t${i}`, 'It is parsed in src/config.ts.')]).flat();
    const found = only(run(events).findings, 're-delegation');
    assert.deepEqual(found.map((f) => [f.action, f.count]), [['warn', 2], ['halt', 3]]);
  });

  it('a subtask re-delegated with a corrected instruction is another subtask', () => {
    const events = [
      delegate('Find where the config is parsed', 't0'),
      back('t0', 'Not found.'),
      delegate('Find where the config is parsed; it is YAML, look under lib/', 't1'),
      back('t1', 'lib/yaml.ts'),
      delegate('Find where the config is parsed; it is YAML, look under lib/ and vendor/', 't2'),
      back('t2', 'lib/yaml.ts'),
    ];
    assert.deepEqual(only(run(events).findings, 're-delegation'), []);
  });

  it('a result that changes is progress: the count starts again', () => {
    const events = times(4, (i) => [delegate('Run the test suite and report failures', `t${i}`, 'tester'), back(`t${i}`, `${4 - i} failing`)]).flat();
    assert.deepEqual(only(run(events).findings, 're-delegation').map((f) => f.action), ['warn', 'warn', 'warn']);
    assert.ok(only(run(events).findings, 're-delegation').every((f) => f.count === 2));
  });

  it('one still out is parallel work, not a re-delegation', () => {
    const events = [delegate('Explore the shim', 'a'), delegate('Explore the shim', 'b'), back('a', 'x'), back('b', 'x')];
    assert.deepEqual(only(run(events).findings, 're-delegation'), []);
  });

  it('results not in the log keep it a warning', () => {
    const events = times(4, (i) => [delegate('Summarise the repo', `t${i}`), back(`t${i}`)]).flat();
    assert.deepEqual(only(run(events).findings, 're-delegation').map((f) => f.action), ['warn']);
  });
});

describe('the turn-level signals beside the others', () => {
  it('new event kinds leave the tool-call signals as they were', () => {
    const calls = times(3, () => ({ type: 'tool', session: s, tool: 'bash', args: { command: 'npm test' }, error: 'Exit code 1' }));
    const plain = run(calls).findings.map((f) => `${f.signal} ${f.action}`);
    const mixed = run([prompt('x'), reply('y'), apiError({ status: 500 }), ...calls.flatMap((c) => [c, { type: 'delegation', session: s, instruction: 'z' }])]).findings.map((f) => `${f.signal} ${f.action}`);
    assert.deepEqual(mixed.filter((f) => !f.startsWith('api-error-storm') && !f.startsWith('re-delegation')), plain);
  });

  it('config: thresholds with defaults, warnAt above the threshold is reported', () => {
    const { config: c, problems } = resolveConfig({ signals: { 'repeated-prompt': { warnAt: 9 } } });
    assert.deepEqual(c.signals['repeated-prompt'], { enabled: true, threshold: 5, warnAt: 9 });
    assert.deepEqual(c.signals['api-error-storm'], { enabled: true, threshold: 5, warnAt: 3, retryBudget: 10 });
    assert.deepEqual(c.signals['re-delegation'], { enabled: true, threshold: 3, warnAt: 2 });
    assert.deepEqual(problems.map((p) => p.path), ['signals.repeated-prompt.warnAt']);
    assert.ok(c.hooks.deny.includes('repeated-prompt'));
  });

  it('a disabled signal raises nothing', () => {
    const events = times(6, () => turn('again', 'same')).flat();
    assert.deepEqual(only(run(events, config({ signals: { 'repeated-prompt': { enabled: false } } })).findings, 'repeated-prompt'), []);
  });
});

describe('re-delegation after a failure', () => {
  const delegate = (id: string) => ({ type: 'delegation', session: s, instruction: 'Explore the save-transcript command', to: 'Explore', id });
  const failed = (id: string, error: string) => ({ type: 'delegation_result', session: s, id, ok: false, error });

  it('a delegation refused once and sent again is a retry, not a loop', () => {
    const events = [delegate('a'), failed('a', 'InputValidationError: description is missing'), delegate('b'), { type: 'delegation_result', session: s, id: 'b', ok: true, output: 'found it' }];
    assert.deepEqual(only(run(events).findings, 're-delegation'), []);
  });

  it('the same failure coming back twice makes the third delegation a loop', () => {
    const events = [delegate('a'), failed('a', 'agent crashed: out of memory'), delegate('b'), failed('b', 'agent crashed: out of memory'), delegate('c')];
    assert.deepEqual(only(run(events).findings, 're-delegation').map((f) => [f.action, f.count]), [['halt', 3]]);
  });
});
