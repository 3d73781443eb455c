import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { defaultConfig } from '../../../src/core/config';
import type { Finding } from '../../../src/core/finding';
import { groupIncidents } from '../../../src/core/incidents';
import { replayFile, type ReplayResult } from '../../../src/watch/replay';
import { describeShared, FIXTURES } from '../helpers';
import { jsonlText, replayText } from './util';

/*
 * The three loops of issue 14 and their healthy neighbours, rebuilt from real transcripts of the
 * shared corpus (../shared/fixtures/real, read where they are): each test takes real records of
 * the agent's own file and changes only what the loop needs (the text of a message, an error, a
 * count of repetitions). Nothing of the fixtures is copied into the project.
 */

const REAL = path.join(FIXTURES, 'real');
type Rec = Record<string, any>;

function jsonlRecords(rel: string): Rec[] {
  return readFileSync(path.join(REAL, rel), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Rec);
}

/** A copy of a real record, with a new id (and the changes the test needs). */
let seq = 0;
function again(record: Rec, change: (r: Rec) => void = () => undefined): Rec {
  const copy = JSON.parse(JSON.stringify(record)) as Rec;
  seq++;
  if (typeof copy.id === 'string') copy.id = `${copy.id.slice(0, 24)}${String(seq).padStart(12, '0')}`;
  change(copy);
  return copy;
}

const of = (r: ReplayResult, signal: Finding['signal']) => r.findings.filter((f) => f.signal === signal).map((f) => `${f.action} ${f.count}`);

describeShared('the loops above the tool calls, rebuilt from real transcripts (issue 14)', 'the real transcripts', function (this: Mocha.Suite) {
  this.timeout(60_000);

  describe('an orchestrator re-sending the same prompt (real Copilot CLI records: msvcc-cb2aca77)', () => {
    const records = jsonlRecords('copilot-cli/msvcc-cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl');
    const head = records.filter((r) => r.type === 'session.start' || r.type === 'session.info');
    const ask = records.find((r) => r.type === 'user.message') as Rec;
    const answer = records.find((r) => r.type === 'assistant.message') as Rec;
    const cannot = 'I cannot act in the current mode: I am in Ask mode and may not edit files or run commands. Switch to Agent mode to let me do this.';

    it('the same prompt sent 18 times by another agent, answered each time that it cannot act in this mode: warns at 3, halts at 5, one loop', async () => {
      const turns = Array.from({ length: 18 }, () => [
        again(ask, (r) => {
          r.data.content = 'Implement the next task of the plan in tasks.md.';
          r.data.source = 'agent-orchestrator';
        }),
        again(answer, (r) => (r.data.content = cannot)),
      ]).flat();
      const r = await replayText('events.jsonl', jsonlText([...head, ...turns]));
      assert.equal(r.format, 'copilot-cli');
      assert.deepEqual(of(r, 'repeated-prompt'), ['warn 3', 'halt 5']);
      const halt = r.findings.find((f) => f.signal === 'repeated-prompt' && f.action === 'halt');
      assert.match(halt?.message ?? '', /5 times in a row by an orchestrator, each time after the same answer \("I cannot act in the current mode/);
      assert.match(halt?.recommendation ?? '', /orchestration loop/);
      const incidents = groupIncidents(r.findings);
      assert.equal(incidents.length, 1, 'one loop, one incident');
      assert.deepEqual(r.findings.filter((f) => f.signal !== 'repeated-prompt'), []);
    });

    it('the person asking different things (the real session: "what is 1+1", "what is 2+2"), or re-asking after a different answer, is no loop', async () => {
      const real = await replayFile(path.join(REAL, 'copilot-cli/msvcc-cb2aca77-f42b-4dbd-a10a-41bd04eaa3ba.jsonl'), 'real', 'auto', defaultConfig());
      assert.deepEqual(real.findings, []);
      // The same question five times, each answer different (the model is asked to continue a story).
      const turns = Array.from({ length: 5 }, (_, i) => [again(ask, (r) => (r.data.content = 'continue')), again(answer, (r) => (r.data.content = `Chapter ${i + 1}: the ship left the harbour…`))]).flat();
      const r = await replayText('events.jsonl', jsonlText([...head, ...turns]));
      assert.deepEqual(of(r, 'repeated-prompt'), []);
      // A person rephrasing after the same refusal.
      const phrasings = ['Implement the next task.', 'Please implement the next task of the plan.', 'Go ahead and do task 4.', 'Switch to agent mode and do task 4.', 'do it'];
      const rephrased = phrasings.flatMap((p) => [again(ask, (r) => (r.data.content = p)), again(answer, (r) => (r.data.content = cannot))]);
      assert.deepEqual(of(await replayText('events.jsonl', jsonlText([...head, ...rephrased])), 'repeated-prompt'), []);
    });
  });

  describe('the same API error while the person re-sends (real Copilot CLI records: engram-07c40cd0)', () => {
    const records = jsonlRecords('copilot-cli/engram-07c40cd0-events.jsonl');
    const start = records.find((r) => r.type === 'session.start') as Rec;
    const ask = records.find((r) => r.type === 'user.message' && r.data.content !== '') as Rec;
    const error = records.find((r) => r.type === 'session.error' && r.data.errorType !== 'mcp') as Rec;
    const answer = records.find((r) => r.type === 'assistant.message' && String(r.data.content).trim() !== '') as Rec;
    const http400 = (r: Rec) => {
      r.data.errorType = 'query';
      r.data.message = 'Execution failed: CAPIError: 400 400 Bad Request';
      r.data.statusCode = 400;
    };

    it('HTTP 400 thirteen times in a row, the same message re-sent each time: the storm warns at 3 and halts at 5, naming the request as the cause; the re-sent prompt is no prompt loop (no answer came)', async () => {
      const turns = Array.from({ length: 13 }, () => [again(ask), again(error, http400)]).flat();
      const r = await replayText('events.jsonl', jsonlText([start, ...turns]));
      assert.equal(r.format, 'copilot-cli');
      assert.deepEqual(of(r, 'api-error-storm'), ['warn 3', 'halt 5']);
      const halt = r.findings.find((f) => f.signal === 'api-error-storm' && f.action === 'halt');
      assert.match(halt?.message ?? '', /failed 5 times in a row with the same error \(HTTP 400\)/);
      assert.match(halt?.recommendation ?? '', /Likely cause: the provider rejects the request itself/);
      assert.deepEqual(of(r, 'repeated-prompt'), []);
      assert.equal(groupIncidents(r.findings).length, 1);
    });

    it('a real Claude Code session (slopometry, lines 379-380) retried a refused connection twice by itself, then the model answered: two retries, no finding', async () => {
      const real = await replayFile(path.join(REAL, 'claude/slopometry-0f112eb4.jsonl'), 'real', 'auto', defaultConfig());
      assert.equal(real.byType.api_error, 2);
      assert.deepEqual(of(real, 'api-error-storm'), []);
    });

    it('a retry that succeeds on the second try ends the run; the real session (one ENOTCONN, then work) raises nothing of it', async () => {
      const turns = Array.from({ length: 6 }, () => [again(ask), again(error, http400), again(ask), again(answer)]).flat();
      assert.deepEqual(of(await replayText('events.jsonl', jsonlText([start, ...turns])), 'api-error-storm'), []);
      const real = await replayFile(path.join(REAL, 'copilot-cli/engram-07c40cd0-events.jsonl'), 'real', 'auto', defaultConfig());
      assert.deepEqual(of(real, 'api-error-storm'), []);
    });
  });

  describe('a task retrying a failing API request (real Roo Code ui_messages: jsb-e73ea764)', () => {
    const messages = JSON.parse(readFileSync(path.join(REAL, 'roo/jsb-e73ea764-ui_messages.json'), 'utf8')) as Rec[];
    // The task as it starts: its text, its first request, the model's first answer.
    const start = messages.slice(0, 4);
    const request = messages[1] as Rec;
    const said = messages[3] as Rec;
    const retry = (status: number, message: string) => again(request, (r) => {
      r.say = 'api_req_retry_delayed';
      r.text = `${status}\n${message}\n`;
    });

    it('37 automatic retries of the same failing request ("no endpoints for this model"): halts at the fifth, one storm; after the person switched models it answered, and switching back starts a second storm', async () => {
      const model = 'No endpoints found for deepseek/deepseek-r1:free.';
      const doc = [...start, ...Array.from({ length: 37 }, () => retry(404, model)), again(request), again(said), ...Array.from({ length: 6 }, () => retry(404, model))];
      const r = await replayText('ui_messages.json', JSON.stringify(doc));
      // The task starts with `say: "text"`: Roo's.
      assert.equal(r.format, 'roo');
      assert.deepEqual(of(r, 'api-error-storm'), ['warn 3', 'halt 5', 'warn 3', 'halt 5']);
      assert.match(r.findings.find((f) => f.action === 'halt')?.recommendation ?? '', /model is not available/);
      assert.equal(groupIncidents(r.findings).filter((i) => i.action === 'halt').length, 2);
    });

    it('the same storm of rate limits only warns: the back-off is right, and the warning names the cause', async () => {
      const doc = [...start, ...Array.from({ length: 37 }, () => retry(429, 'Rate limit exceeded: free-models-per-min.'))];
      const r = await replayText('ui_messages.json', JSON.stringify(doc));
      assert.deepEqual(of(r, 'api-error-storm'), ['warn 3']);
      assert.match(r.findings[0]?.recommendation ?? '', /rate-limiting/);
    });

    it('a retry that succeeds on the second try: no finding; and the real task (no failed request) raises none', async () => {
      const doc = [...start, retry(503, 'Service Unavailable'), again(request), again(said)];
      assert.deepEqual(of(await replayText('ui_messages.json', JSON.stringify(doc)), 'api-error-storm'), []);
      const real = await replayFile(path.join(REAL, 'roo/jsb-e73ea764-ui_messages.json'), 'real', 'auto', defaultConfig());
      assert.deepEqual(of(real, 'api-error-storm'), []);
    });
  });

  describe('the same subtask delegated again (real Roo Code orchestrator: jsb-ac8aa7b4, and a real VS Code chat)', () => {
    const messages = JSON.parse(readFileSync(path.join(REAL, 'roo/jsb-ac8aa7b4-ui_messages.json'), 'utf8')) as Rec[];
    const isTask = (m: Rec) => m.ask === 'tool' && typeof m.text === 'string' && m.text.includes('"newTask"');
    const delegated = messages.find(isTask) as Rec;
    const back = messages[messages.indexOf(delegated) + 1] as Rec;

    it('the real orchestrator delegates eleven different subtasks and gets each back: no finding', async () => {
      assert.equal(back.say, 'subtask_result');
      const real = await replayFile(path.join(REAL, 'roo/jsb-ac8aa7b4-ui_messages.json'), 'real', 'auto', defaultConfig());
      assert.ok(real.events > 0);
      assert.deepEqual(of(real, 're-delegation'), []);
    });

    it('its first subtask delegated three times, each coming back with the same report: warns at 2, halts at 3', async () => {
      const doc = [...messages.slice(0, messages.indexOf(delegated)), ...Array.from({ length: 3 }, () => [again(delegated), again(back)]).flat()];
      const r = await replayText('ui_messages.json', JSON.stringify(doc));
      assert.deepEqual(of(r, 're-delegation'), ['warn 2', 'halt 3']);
    });

    it('re-delegated with a corrected instruction: no finding', async () => {
      const corrected = (n: number) =>
        again(delegated, (r) => {
          const t = JSON.parse(r.text as string) as Rec;
          t.content = `${String(t.content)}\n\nCorrection ${n}: look in globalStorage, not in workspaceStorage.`;
          r.text = JSON.stringify(t);
        });
      const doc = [...messages.slice(0, messages.indexOf(delegated)), again(delegated), again(back), corrected(1), again(back), corrected(2), again(back)];
      assert.deepEqual(of(await replayText('ui_messages.json', JSON.stringify(doc)), 're-delegation'), []);
    });

    it('the real VS Code chat delegating "TDD RED: Next failing test" twice with a new context each time: no finding', async () => {
      const real = await replayFile(path.join(REAL, 'copilot-vscode/digitarald-tdd-review.json'), 'real', 'auto', defaultConfig());
      assert.ok(real.events > 0);
      assert.deepEqual(of(real, 're-delegation'), []);
    });
  });
});
