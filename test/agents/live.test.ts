import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { DRIVERS, kiloCli, openCode, qwen, type LiveAgent } from './drivers';
import { ensureAgent } from './install';
import { liveRun, turnsAfter, type LiveOptions, type LiveRun } from './live';
import { CLI, guardian, makeSandbox, type Sandbox } from './sandbox';
import type { Step, Turn } from './model';

/*
 * The live-agent suite: each agent's own released CLI, its hook installed by `loop-guardian init
 * <agent>`, driven offline by a scripted model. Every assertion is on what the agent itself did:
 * what it sent the model back for a call (its refusal text, a command's output), what ran (npm
 * writes one debug log per run into the sandbox's HOME; files a command creates), how many model
 * requests it made, and how its run ended. The guardian's own records are looked at only to tell
 * which model request the halt came at.
 *
 * The agents' own loop guards act at 5 identical calls (Gemini CLI, Cline, Qwen Code); the
 * guardian's default refuses the 3rd, below them.
 */

const FAILING = 'npm run build-missing';
const REFUSED = /Loop Guardian refused this call|Loop Guardian ended this run/;
const STOPPED = /STOP_ALL is set to STOP/;
/** The agents whose run the guardian can end from its hook; Codex cannot (nothing mid-turn: docs/agents.md). */
const ENDABLE = new Set(['claude', 'gemini', 'copilot-cli', 'cline']);
/**
 * The agents whose run the guardian ends on a refused read-only call (not a shell call): Copilot CLI
 * ends a run only at a permission request, which it does not make for `view` (docs/agents.md).
 */
const ENDS_READS = new Set(['claude', 'gemini', 'cline']);
/**
 * The agents that show the person why the guardian ended their run (the hooks' `systemMessage`,
 * in their own headless output: Claude Code's stream-json `system` notice, Gemini CLI's): a
 * script or a CI log reading that output sees it (issue 33 item 4).
 */
const SAYS_WHY = new Set(['claude', 'gemini']);

/** What the agent itself printed (its stdout and stderr, not what it sent the model): what a person or a CI log sees. */
function agentPrinted(run: LiveRun): string {
  return `${run.result.stdout}\n${run.result.stderr}`;
}

/** The agents whose headless JSON output (the drivers' `--output-format`) the guardian reads: docs/agents.md. */
const HEADLESS_READ = new Set(['claude', 'gemini', 'copilot-cli']);

/** Per agent, what the suite measured: printed at the end. */
const measured = new Map<string, { halt?: number; stopMid?: number; stopBefore?: number; healthy?: number; readHalt?: number; editHalt?: number; unseenHalt?: number; stopSubfolder?: number; stopNested?: number }>();
function measure(agent: LiveAgent, key: 'halt' | 'stopMid' | 'stopBefore' | 'healthy' | 'readHalt' | 'editHalt' | 'unseenHalt' | 'stopSubfolder' | 'stopNested', value: number): void {
  measured.set(agent.pkg.id, { ...measured.get(agent.pkg.id), [key]: value });
}

/** How many times `npm run` actually ran in the sandbox: npm writes one debug log per run under $HOME/.npm/_logs. */
function npmRuns(run: LiveRun): number {
  const dir = path.join(run.sb.home, '.npm', '_logs');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('-debug-0.log')).length : 0;
}

/** Everything the agent said: its own output and what it sent the model back for each call. */
function agentSaid(run: LiveRun): string {
  return [run.result.stdout, run.result.stderr, ...run.turns.map((t) => t.lastResult)].join('\n');
}

/** The turn at which the agent's reply for a call first carried the guardian's refusal (the model reads it then). */
function refusalTurn(run: LiveRun, pattern = REFUSED): number | undefined {
  return run.turns.find((t) => pattern.test(t.lastResult))?.turn;
}

/** The guardian's hook records of the run (to tell at which request it refused). */
function hookRecords(run: LiveRun): Record<string, unknown>[] {
  const dir = path.join(run.sb.ws, '.tmp', 'current', 'logs');
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.startsWith('hook-'))
    .flatMap((f) =>
      readFileSync(path.join(dir, f), 'utf8')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    );
}

/** The guardian's own log of the run: what it says it did. */
function guardianLog(run: LiveRun): string {
  const file = path.join(run.sb.ws, '.tmp', 'guardian', 'guardian.log');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

function refusedRecords(run: LiveRun): number {
  return hookRecords(run).filter((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian')).length;
}

/** A script that keeps asking for the same shell command. */
const always =
  (command: string) =>
  (turn: Turn, a: LiveAgent): Step =>
    a.shell(command, turn.tools);

function describeRun(run: LiveRun): string {
  const t = run.turns.map((r) => `#${r.turn}: ${r.lastResult.slice(0, 160).replace(/\s+/g, ' ')}`).join('\n');
  return `exit ${run.result.code}${run.result.timedOut ? ' (timed out)' : ''}, ${run.turns.length} requests\n${t}\nstderr: ${run.result.stderr.slice(-1500)}`;
}

/** How models retry a failing command: the same migration, written another way each time (issue 36). */
function retryVariation(turn: number, ws: string, first = 0): string {
  const forms = ['npm run db:migrate', 'npm run db:migrate 2>&1', `cd ${ws} && npm run db:migrate`, 'sleep 1 && npm run db:migrate', 'npm run db:migrate --verbose', 'npm run db:migrate 2>&1 | tail -20'];
  return forms[(first + turn - 1) % forms.length] as string;
}

/** A project whose migration cannot reach its database; with `noisy`, its error carries what changes every run. */
function migrationProject(noisy: boolean): Record<string, string> {
  const noise = noisy ? "console.error('[' + new Date().toISOString() + '] ' + new Date().toTimeString().slice(0, 8) + ' pid ' + process.pid + ' request ' + require('crypto').randomUUID() + ' workdir /tmp/tmp.' + Math.random().toString(36).slice(2, 10) + ' nonce ' + Math.random());" : '';
  return {
    'package.json': `${JSON.stringify({ name: 'live-project', version: '1.0.0', private: true, scripts: { 'db:migrate': 'node migrate.js' } }, null, 2)}\n`,
    'migrate.js': `${noise}\nconsole.error('Error: connect ECONNREFUSED 127.0.0.1:5432');\nprocess.exit(1);\n`,
  };
}

for (const agent of Object.values(DRIVERS)) {
  describe(`live: ${agent.pkg.label} ${agent.pkg.version} (its own CLI, scripted model)`, function () {
    this.timeout(240_000);
    const runs: LiveRun[] = [];
    afterEach(() => {
      for (const r of runs.splice(0)) {
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') r.sb.cleanup();
      }
    });
    const keep = (r: LiveRun) => (runs.push(r), r);

    it(`the same failing command (${FAILING}, its output changing each run) is refused at the 3rd call; a persisting agent is ended`, async () => {
      const run = keep(await liveRun(agent, always(FAILING), { maxTurns: 10 }));
      const said = agentSaid(run);
      assert.match(said, /Missing script: \\?"build-missing\\?"/, describeRun(run));
      assert.equal(npmRuns(run), 2, `the command ran twice, then was refused\n${describeRun(run)}`);
      assert.ok(refusedRecords(run) >= 1, describeRun(run));
      // The refusal reaches the model in the agent's own words, except Cline's, which cancels the whole task.
      if (agent.pkg.id !== 'cline') assert.ok(refusalTurn(run) !== undefined, `the model read the refusal\n${describeRun(run)}`);
      const after = turnsAfter(run, 3);
      measure(agent, 'halt', after);
      assert.equal(run.result.timedOut, false, describeRun(run));
      if (ENDABLE.has(agent.pkg.id)) {
        assert.ok(after <= 2, `model requests after the halt: ${after} (goal <= 2)\n${describeRun(run)}`);
        // Ended, the run says why in the agent's own output (not only to the model).
        if (SAYS_WHY.has(agent.pkg.id)) assert.match(agentPrinted(run), /Loop Guardian stopped this run\. Loop Guardian (?:refused|ended)/, `the agent's own output says why it ended\n${run.result.stdout.slice(-2000)}`);
      }
      // An agent that cannot be ended is told so, and asked to end its turn itself; every retry stays refused.
      else assert.match(said, /cannot end this run from its hook/, describeRun(run));
    });

    it('watched, not hooked: its own transcript, found and read by `scan`, shows the loop with the real error', async () => {
      // Three failing runs, then the model gives up; the guardian only reads what the agent wrote.
      const run = keep(await liveRun(agent, (turn, a) => (turn.index <= 3 ? a.shell(FAILING, turn.tools) : { text: 'Giving up: the build script is missing.' }), { hook: false, maxTurns: 5, config: { agents: { [agent.pkg.id]: { enabled: true } } } }));
      assert.equal(npmRuns(run), 3, describeRun(run));
      const scan = guardian(run.sb, ['scan', '--json']);
      const out = JSON.parse(scan.stdout) as { files: string[]; findings: { signal: string; action: string; message: string; file: string }[] };
      const loop = out.findings.find((f) => f.action === 'halt' && /Missing script/.test(f.message));
      assert.ok(loop, `a halting loop named by its real error, in the agent's own transcript:\n${JSON.stringify(out.findings.map((f) => [f.signal, f.action, f.file, f.message.slice(0, 120)]), null, 1)}\nfiles: ${out.files.join(', ')}\n${scan.stderr}`);
      assert.ok(path.isAbsolute(loop.file) && !loop.file.startsWith(run.sb.ws), `found in the agent's own folder: ${loop.file}`);
      // What the agent printed in its headless JSON mode, saved to a file, is read the same way.
      if (HEADLESS_READ.has(agent.pkg.id)) {
        const saved = path.join(run.sb.dir, 'headless-output.jsonl');
        writeFileSync(saved, run.result.stdout);
        const replay = guardian(run.sb, ['replay', saved]);
        assert.equal(replay.code, 1, `a halt: ${replay.stdout}${replay.stderr.slice(0, 1500)}`);
        assert.match(replay.stdout, /\(claude|gemini|copilot-cli\), 0 line\(s\) skipped/, replay.stdout);
        // Named by the call (Gemini CLI's stream-json says a failed command succeeded, its exit code nowhere: the loop is its identical outputs).
        assert.match(replay.stdout, /^HALT .*\n.*npm run build-missing/m, replay.stdout);
      }
    });

    it('STOP before the run: nothing runs, and the run ends at once where the agent allows it', async () => {
      const run = keep(await liveRun(agent, always('touch ran-under-stop.txt'), { stopBefore: `STOP ${new Date().toISOString()} before the run\n`, maxTurns: 10 }));
      assert.equal(existsSync(path.join(run.sb.ws, 'ran-under-stop.txt')), false, `a command ran under STOP\n${describeRun(run)}`);
      measure(agent, 'stopBefore', run.turns.length);
      if (ENDABLE.has(agent.pkg.id) || agent.pkg.id === 'codex') assert.ok(run.turns.length <= 1, `model requests under STOP: ${run.turns.length} (goal <= 1)\n${describeRun(run)}`);
      // Refused before the first request, the prompt: the agent's own result says why (Claude Code's "UserPromptSubmit operation blocked by hook: …").
      if (SAYS_WHY.has(agent.pkg.id)) assert.match(agentPrinted(run), STOPPED, `the agent's own output says why it stopped\n${run.result.stdout.slice(-2000)}`);
      assert.equal(run.result.timedOut, false, describeRun(run));
    });

    it('STOP written mid-run: the next call is refused and the run ends (<= 1 model request after it)', async () => {
      let n = 0;
      const run = keep(
        await liveRun(agent, (turn, a) => a.shell(`echo step-${++n} >> steps.txt`, turn.tools), { stopAtTurn: 3, maxTurns: 10 }),
      );
      const steps = existsSync(path.join(run.sb.ws, 'steps.txt')) ? readFileSync(path.join(run.sb.ws, 'steps.txt'), 'utf8').trim().split('\n') : [];
      assert.equal(steps.length, 2, `the two calls before STOP ran, none after\n${describeRun(run)}`);
      const after = turnsAfter(run, 3);
      measure(agent, 'stopMid', after);
      if (ENDABLE.has(agent.pkg.id)) assert.ok(after <= 1, `model requests after STOP: ${after} (goal <= 1)\n${describeRun(run)}`);
      assert.ok(agent.pkg.id === 'cline' || STOPPED.test(agentSaid(run)), `the STOP reason reached the agent\n${describeRun(run)}`);
      if (SAYS_WHY.has(agent.pkg.id)) assert.match(agentPrinted(run), /Loop Guardian stopped this run\. STOP_ALL is set to STOP/, `the agent's own output says why it stopped\n${run.result.stdout.slice(-2000)}`);
    });

    it('healthy: edit -> test -> edit -> test until green is never refused', async () => {
      // test.js fails, naming the value it found, until value.txt says 4; the model writes 1, 2, 3, 4.
      const check = "const v=require('fs').readFileSync('value.txt','utf8').trim(); if (v!=='4') { console.error('expected 4, got '+v); process.exit(1) } console.log('green')";
      const steps: string[] = [];
      for (let v = 1; v <= 4; v++) steps.push(`echo ${v} > value.txt`, 'node check.js');
      const run = keep(
        await liveRun(agent, (turn, a) => (turn.index <= steps.length ? a.shell(steps[turn.index - 1] as string, turn.tools) : { text: 'Green: done.' }), {
          files: { 'check.js': `${check}\n` },
          maxTurns: 12,
        }),
      );
      assert.doesNotMatch(agentSaid(run), REFUSED, describeRun(run));
      assert.equal(refusedRecords(run), 0, describeRun(run));
      assert.equal(readFileSync(path.join(run.sb.ws, 'value.txt'), 'utf8').trim(), '4', describeRun(run));
      assert.match(agentSaid(run), /green/, describeRun(run));
      measure(agent, 'healthy', refusedRecords(run));
    });

    it('healthy: polling a long build whose output changes is never refused', async () => {
      // The same command four times (the agents' own guards stop a fifth); each run finds the build further along.
      const poll = "const fs=require('fs'); fs.appendFileSync('build.log','tick\\n'); console.log('build: '+fs.readFileSync('build.log','utf8').trim().split('\\n').length+'/4 steps')";
      const run = keep(await liveRun(agent, (turn, a) => (turn.index <= 4 ? a.shell('node poll.js', turn.tools) : { text: 'Built.' }), { files: { 'poll.js': `${poll}\n` }, maxTurns: 6 }));
      assert.doesNotMatch(agentSaid(run), REFUSED, describeRun(run));
      assert.equal(readFileSync(path.join(run.sb.ws, 'build.log'), 'utf8').trim().split('\n').length, 4, describeRun(run));
    });

    it('healthy: a retry that succeeds is never refused', async () => {
      // Fails twice (a flaky step), then succeeds; the agent moves on.
      const flaky = "const fs=require('fs'); const n=(fs.existsSync('attempts')?Number(fs.readFileSync('attempts','utf8')):0)+1; fs.writeFileSync('attempts',String(n)); if (n<3) { console.error('network timeout (attempt '+n+')'); process.exit(1) } console.log('fetched')";
      const run = keep(
        await liveRun(agent, (turn, a) => (turn.index <= 3 ? a.shell('node fetch.js', turn.tools) : turn.index === 4 ? a.shell('node test.js', turn.tools) : { text: 'Done.' }), {
          files: { 'fetch.js': `${flaky}\n` },
          maxTurns: 6,
        }),
      );
      assert.doesNotMatch(agentSaid(run), REFUSED, describeRun(run));
      assert.equal(readFileSync(path.join(run.sb.ws, 'attempts'), 'utf8').trim(), '3', describeRun(run));
      assert.match(agentSaid(run), /tests pass/, describeRun(run));
    });

    it('the same failing edit (its search text not in the file) is refused by the 3rd try', async function () {
      if (agent.edit === undefined) this.skip();
      const edit = agent.edit;
      const file = path.join('src', 'app.js');
      // An absolute path, as the agents' edit tools take it.
      // Claude Code watched as well: its transcript is where such a loop shows.
      const watched = agent.pkg.id === 'claude' ? { config: { agents: { claude: { enabled: true } } } } : {};
      const run = keep(await liveRun(agent, (turn, _a, sb) => edit(path.join(sb.ws, file), 'function neverWritten() { return 42; }', 'function neverWritten() { return 43; }', turn.tools), { files: { [file]: 'const y = 1;\n' }, maxTurns: 8, ...watched }));
      assert.equal(readFileSync(path.join(run.sb.ws, file), 'utf8'), 'const y = 1;\n', describeRun(run));
      if (agent.pkg.id === 'claude') {
        // Claude Code rejects such an edit while checking its input, before any hook runs
        // (`<tool_use_error>String to replace not found`): its hooks never see the loop, and no
        // other hook call comes after it here. Its transcript does, and the guardian reading it
        // (replay, or watching: the hooked session's transcript read for the calls its hook log lacks) flags it.
        assert.equal(refusedRecords(run), 0);
        assert.match(agentSaid(run), /String to replace not found/);
        const rejected = run.turns.filter((t) => /String to replace not found/.test(t.lastResult)).length;
        const scan = JSON.parse(guardian(run.sb, ['scan', '--json']).stdout) as { findings: { signal: string; action: string; message: string; count: number; file: string }[] };
        const seen = scan.findings.find((f) => f.action === 'halt' && f.signal === 'repeated-error' && /Edit/.test(f.message));
        assert.ok(seen, JSON.stringify(scan.findings.map((f) => [f.signal, f.action, f.count, f.message.slice(0, 100)])));
        assert.equal(seen.count, rejected, `each rejected Edit once\n${describeRun(run)}`);
        const transcripts = path.join(run.sb.home, '.claude', 'projects');
        const file0 = readdirSync(transcripts).flatMap((d) => readdirSync(path.join(transcripts, d)).filter((f) => f.endsWith('.jsonl')).map((f) => path.join(transcripts, d, f)))[0] as string;
        const replay = guardian(run.sb, ['replay', file0]);
        assert.equal(replay.code, 1, `${replay.stdout}${replay.stderr}`);
        assert.match(replay.stdout, /Edit/);
        return;
      }
      assert.ok(refusedRecords(run) >= 1, `refused\n${describeRun(run)}`);
      const firstRefused = hookRecords(run).findIndex((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian'));
      const triesBefore = hookRecords(run).slice(0, firstRefused).filter((e) => e.type === 'tool').length;
      assert.ok(triesBefore <= 2, `tried ${triesBefore} times before the refusal\n${describeRun(run)}`);
      const refused = refusalTurn(run);
      if (refused !== undefined) measure(agent, 'editHalt', turnsAfter(run, refused));
      if (agent.pkg.id === 'codex') {
        // Codex's apply_patch refused the patch itself (its lines are not in the file), and the
        // guardian read that as a failure (the rollout's text, no exit code): the tries before the refusal failed.
        assert.match(agentSaid(run), /apply_patch verification failed: Failed to find expected lines/, describeRun(run));
        const results = hookRecords(run).filter((e) => e.type === 'tool_result');
        assert.ok(results.length >= 1 && results.every((e) => e.ok === false), `each patch recorded as failed: ${JSON.stringify(results)}`);
        // It cannot be ended: every retry after the first refusal is refused too, and it is told so.
        const after = hookRecords(run).slice(firstRefused).filter((e) => e.type === 'tool');
        assert.ok(after.every((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian')), `every later try refused\n${describeRun(run)}`);
        assert.match(agentSaid(run), /cannot end this run from its hook/, describeRun(run));
      }
    });

    it('healthy: patches that apply, each followed by the test, until green, are never refused (Codex apply_patch)', async function () {
      // Codex edits with apply_patch: a patch that applies is progress, however alike the patches look.
      if (agent.pkg.id !== 'codex' || agent.edit === undefined) this.skip();
      const edit = agent.edit;
      const check = "const v=require('fs').readFileSync('value.txt','utf8').trim(); if (v!=='4') { console.error('expected 4, got '+v); process.exit(1) } console.log('green')";
      const run = keep(
        await liveRun(
          agent,
          (turn, a, sb) => {
            if (turn.index > 6) return { text: 'Green: done.' };
            const v = Math.ceil(turn.index / 2);
            return turn.index % 2 === 1 ? edit(path.join(sb.ws, 'value.txt'), String(v), String(v + 1), turn.tools) : a.shell('node check.js', turn.tools);
          },
          { files: { 'check.js': `${check}\n`, 'value.txt': '1\n' }, maxTurns: 8 },
        ),
      );
      assert.doesNotMatch(agentSaid(run), REFUSED, describeRun(run));
      assert.equal(refusedRecords(run), 0, describeRun(run));
      assert.equal(readFileSync(path.join(run.sb.ws, 'value.txt'), 'utf8').trim(), '4', describeRun(run));
      assert.match(agentSaid(run), /Success\. Updated the following files/, describeRun(run));
      assert.match(agentSaid(run), /green/, describeRun(run));
      // The two failing checks between patches were recorded as failures, and still not refused.
      assert.ok(hookRecords(run).filter((e) => e.type === 'tool_result' && e.ok === false).length >= 2, JSON.stringify(hookRecords(run)));
    });

    it('the same failing read (a file that does not exist, not a shell call) is refused by the 4th call; the run is ended where the agent can end it for such a call, else the model is told it was not', async function () {
      if (agent.read === undefined) this.skip();
      const read = agent.read;
      const run = keep(await liveRun(agent, (turn, _a, sb) => read(path.join(sb.ws, 'src', 'missing.js'), turn.tools), { maxTurns: 10 }));
      const refused = refusalTurn(run);
      assert.ok(refused !== undefined && refused <= 4, `refused by the 4th call (the model read it at request ${refused})\n${describeRun(run)}`);
      const after = turnsAfter(run, refused);
      measure(agent, 'readHalt', after);
      assert.equal(run.result.timedOut, false, describeRun(run));
      if (ENDS_READS.has(agent.pkg.id)) assert.ok(after <= 1, `model requests after the refusal: ${after} (goal <= 1)\n${describeRun(run)}`);
      else {
        // Said as it is: the model is told the run was not ended, and the guardian's log never says it was.
        assert.match(agentSaid(run), /cannot end this run from its hook/, describeRun(run));
        assert.doesNotMatch(guardianLog(run), /ended the run/, guardianLog(run));
      }
    });

    it('PAUSE: a subagent is refused; the agent\'s own work goes on', async function () {
      if (agent.delegate === undefined) this.skip();
      const delegate = agent.delegate;
      const run = keep(
        await liveRun(agent, (turn, a) => (turn.index === 1 ? delegate('Build the project', turn.tools) : turn.index === 2 ? a.shell('echo done > finished.txt', turn.tools) : { text: 'Done.' }), {
          stopBefore: `PAUSE ${new Date().toISOString()}\n`,
          maxTurns: 4,
        }),
      );
      assert.ok(refusedRecords(run) === 0, 'a PAUSE refusal is not a loop record');
      if (agent.pkg.id === 'cline') {
        // Cline has no refusal of one call: refusing the subagent cancels the task (docs/agents.md).
        assert.equal(run.turns.length, 1, describeRun(run));
        return;
      }
      assert.ok(existsSync(path.join(run.sb.ws, 'finished.txt')), `its own work ran under PAUSE\n${describeRun(run)}`);
      assert.match(agentSaid(run), /STOP_ALL is set to PAUSE/, describeRun(run));
    });

    for (const noisy of [false, true]) {
      it(`the same failing command retried with trivial variations (${noisy ? '--verbose, | tail, then' : ''} 2>&1, cd, sleep${noisy ? '' : ', …'}), a new description each time${noisy ? ', its error full of noise (clock times, pids, UUIDs, temp paths, random numbers)' : ''}, is refused by the 4th call`, async () => {
        const run = keep(
          await liveRun(
            agent,
            (turn, a, sb) => {
              const step = a.shell(retryVariation(turn.index, sb.ws, noisy ? 4 : 0), turn.tools);
              return 'args' in step && 'description' in step.args ? { ...step, args: { ...step.args, description: `Retry the migration (${turn.index})` } } : step;
            },
            { maxTurns: 10, files: migrationProject(noisy) },
          ),
        );
        const said = agentSaid(run);
        assert.match(said, /ECONNREFUSED 127\.0\.0\.1:5432/, describeRun(run));
        // What the hook let run before its first refusal: three tries of the migration, the 4th refused.
        const records = hookRecords(run);
        const firstRefused = records.findIndex((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian'));
        const triesBefore = records.slice(0, firstRefused).filter((e) => e.type === 'tool').length;
        assert.ok(firstRefused >= 0 && triesBefore <= 3, `tried ${triesBefore} times before the refusal\n${describeRun(run)}`);
        if (agent.pkg.id !== 'cline') assert.ok(refusalTurn(run) !== undefined, `the model read the refusal\n${describeRun(run)}`);
        const refusals = hookRecords(run).filter((e) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian'));
        assert.match(String(refusals[0]?.error), /repeated-error|failing-call/, describeRun(run));
        assert.equal(run.result.timedOut, false, describeRun(run));
        // Copilot CLI ends a run only at a permission request, which it does not send for every
        // shell command (here, seen: not for `cd <project> && …`): the refusal handed over to it
        // then ran once, and from there every call is refused before it runs, the run not ended.
        const guardianLog = existsSync(path.join(run.sb.ws, '.tmp', 'guardian', 'guardian.log')) ? readFileSync(path.join(run.sb.ws, '.tmp', 'guardian', 'guardian.log'), 'utf8') : '';
        const handoverFailed = agent.pkg.id === 'copilot-cli' && /ran without the permission request its refusal was handed to/.test(guardianLog);
        if (handoverFailed) {
          const refused = (e: Record<string, unknown>) => typeof e.error === 'string' && e.error.startsWith('Refused by Loop Guardian');
          const ranAfter = records.findIndex((e, i) => i > firstRefused && e.type === 'tool' && !refused(e));
          assert.ok(ranAfter > firstRefused, describeRun(run));
          const after = records.slice(ranAfter + 1).filter((e) => e.type === 'tool');
          assert.ok(after.length > 0 && after.every(refused), `after the handed-over call ran, every call is refused\n${describeRun(run)}`);
        } else if (ENDABLE.has(agent.pkg.id)) assert.ok(turnsAfter(run, 4) <= 2, `model requests after the refusal: ${turnsAfter(run, 4)}\n${describeRun(run)}`);
        // What the hook refused, `scan` halts: one judgement.
        const scan = guardian(run.sb, ['scan']);
        assert.match(scan.stdout, /HALT\s+(?:repeated-error|failing-call)/, scan.stdout);
      });
    }

    it('a cycle of two failing calls (A, B, A, B, …) is refused before the agents\' own guards', async () => {
      const a = 'npm run build-missing';
      const b = 'npm run lint-missing';
      const run = keep(await liveRun(agent, (turn, d) => d.shell(turn.index % 2 === 1 ? a : b, turn.tools), { maxTurns: 10 }));
      assert.ok(refusedRecords(run) >= 1, describeRun(run));
      assert.ok(npmRuns(run) <= 5, `ran ${npmRuns(run)} times before a refusal\n${describeRun(run)}`);
      assert.equal(run.result.timedOut, false, describeRun(run));
    });
  });
}

describe('live: two agents in one workspace', function () {
  this.timeout(300_000);

  it('Claude Code loops while Gemini CLI polls a build in the same workspace, at the same time: the loop is refused, the healthy agent never is', async () => {
    const claude = DRIVERS.claude as LiveAgent;
    const gemini = DRIVERS.gemini as LiveAgent;
    const sb = makeSandbox('two');
    try {
      for (const id of ['claude', 'gemini']) {
        const init = guardian(sb, ['init', id]);
        assert.equal(init.code, 0, init.stderr);
      }
      const poll = "const fs=require('fs'); fs.appendFileSync('build.log','tick\\n'); console.log('build: '+fs.readFileSync('build.log','utf8').trim().split('\\n').length+'/4 steps')";
      writeFileSync(path.join(sb.ws, 'poll.js'), `${poll}\n`);
      const [looping, healthy] = await Promise.all([
        liveRun(claude, always(FAILING), { sandbox: sb, shared: true, maxTurns: 8 }),
        liveRun(gemini, (turn, a) => (turn.index <= 4 ? a.shell('node poll.js', turn.tools) : { text: 'Built.' }), { sandbox: sb, shared: true, maxTurns: 6 }),
      ]);
      assert.match(agentSaid(looping), REFUSED, describeRun(looping));
      assert.ok(turnsAfter(looping, 3) <= 2, `Claude Code's requests after the refusal: ${turnsAfter(looping, 3)}\n${describeRun(looping)}`);
      assert.doesNotMatch(agentSaid(healthy), REFUSED, describeRun(healthy));
      assert.equal(readFileSync(path.join(sb.ws, 'build.log'), 'utf8').trim().split('\n').length, 4, describeRun(healthy));
      // Each agent's session is its own: scan shows the one loop, Claude Code's.
      const scan = guardian(sb, ['scan', '--json']);
      const halts = (JSON.parse(scan.stdout) as { findings: { action: string; agent?: string }[] }).findings.filter((f) => f.action === 'halt');
      assert.ok(halts.length > 0 && halts.every((f) => f.agent === 'claude-code'), scan.stdout);
    } finally {
      if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') sb.cleanup();
    }
  });
});

describe('live: Claude Code, a loop its hook never sees (calls it rejects before any hook)', function () {
  this.timeout(240_000);
  it('the same failing edit (its search text not in the file), rejected before PreToolUse: `scan` shows it with the hook installed, and it is refused, the run ended, at the next hook call', async () => {
    const agent = DRIVERS.claude as LiveAgent;
    const file = path.join('src', 'app.js');
    // Four Edits Claude Code rejects while checking them (no hook runs), then a shell call: the first its hook sees.
    const run = await liveRun(
      agent,
      (turn, a, sb) => (turn.index <= 4 ? (a.edit as NonNullable<LiveAgent['edit']>)(path.join(sb.ws, file), 'function neverWritten() { return 42; }', 'function neverWritten() { return 43; }', turn.tools) : a.shell('echo next >> after-the-edits.txt', turn.tools)),
      { files: { [file]: 'const y = 1;\n' }, maxTurns: 8, config: { agents: { claude: { enabled: true } } } },
    );
    try {
      assert.match(agentSaid(run), /String to replace not found/, describeRun(run));
      assert.equal(existsSync(path.join(run.sb.ws, 'after-the-edits.txt')), false, `the next call was refused\n${describeRun(run)}`);
      // Refused at its PreToolUse and the run ended there: no request after the 5th (seen: 0).
      const after = turnsAfter(run, 5);
      measure(agent, 'unseenHalt', after);
      assert.ok(run.turns.length === 5 || (refusalTurn(run, /a loop ran that its hook never saw/) === 6 && after <= 1), `model requests after the refusal: ${after} (goal <= 1)\n${describeRun(run)}`);
      assert.equal(run.result.timedOut, false, describeRun(run));
      const scan = guardian(run.sb, ['scan', '--json']);
      const out = JSON.parse(scan.stdout) as { findings: { signal: string; action: string; message: string; count: number }[] };
      const loop = out.findings.find((f) => f.action === 'halt' && /Edit/.test(f.message) && /String to replace not found/.test(f.message));
      assert.ok(loop, `${JSON.stringify(out.findings.map((f) => [f.signal, f.action, f.count, f.message.slice(0, 100)]))}\n${scan.stderr}`);
      assert.equal(loop.count, 4, 'each rejected Edit counted once (the hook log and the transcript both hold them)');
    } finally {
      if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') run.sb.cleanup();
    }
  });
});

describe(`live: ${qwen.pkg.label} ${qwen.pkg.version}, watched (its own CLI, scripted model)`, function () {
  this.timeout(240_000);
  it('its own chat recording, found and read by `scan`, shows the loop with the real error; a search that found nothing is no failure', async () => {
    const run = await liveRun(qwen, (turn, a) => (turn.index <= 3 ? a.shell(FAILING, turn.tools) : turn.index === 4 ? a.shell('ls | grep nothing-here', turn.tools) : { text: 'Giving up: the build script is missing.' }), { hook: false, maxTurns: 6, config: { agents: { qwen: { enabled: true } } } });
    try {
      assert.equal(npmRuns(run), 3, describeRun(run));
      const scan = guardian(run.sb, ['scan', '--json']);
      const out = JSON.parse(scan.stdout) as { files: string[]; findings: { signal: string; action: string; message: string; file: string }[] };
      const loop = out.findings.find((f) => f.action === 'halt' && /Missing script/.test(f.message));
      assert.ok(loop, `${JSON.stringify(out.findings.map((f) => [f.signal, f.action, f.message.slice(0, 100)]))}\nfiles: ${out.files.join(', ')}\n${scan.stderr}`);
      assert.match(loop.file, /\.qwen\/projects\/.*\/chats\/[0-9a-f-]+\.jsonl$/);
      assert.ok(!out.findings.some((f) => /grep nothing-here/.test(f.message)), 'the search that found nothing is no loop');
    } finally {
      if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') run.sb.cleanup();
    }
  });
});

for (const agent of [openCode, kiloCli]) {
  const id = agent.pkg.id;
  describe(`live: ${agent.pkg.label} ${agent.pkg.version}, watched (its own CLI, scripted model)`, function () {
    this.timeout(240_000);
    it('its own SQLite database (in WAL mode: read with its log), found and read by `scan`, shows the loop with the real error; `replay` reads the database and the agent\'s own export', async () => {
      const run = await liveRun(agent, (turn, a) => (turn.index <= 3 ? a.shell(FAILING, turn.tools) : turn.index === 4 ? a.shell('ls | grep nothing-here', turn.tools) : { text: 'Giving up: the build script is missing.' }), { hook: false, maxTurns: 6, config: { agents: { [id]: { enabled: true } } } });
      try {
        assert.equal(npmRuns(run), 3, describeRun(run));
        const db = path.join(run.sb.home, '.local', 'share', id, `${id}.db`);
        assert.ok(existsSync(db) && existsSync(`${db}-wal`), `its database and its log\n${describeRun(run)}`);
        const scan = guardian(run.sb, ['scan', '--json']);
        const out = JSON.parse(scan.stdout) as { files: string[]; findings: { signal: string; action: string; message: string; file: string; session: string }[] };
        const loop = out.findings.find((f) => f.action === 'halt' && /Missing script/.test(f.message));
        assert.ok(loop, `${JSON.stringify(out.findings.map((f) => [f.signal, f.action, f.message.slice(0, 100)]))}\nfiles: ${out.files.join(', ')}\n${scan.stderr}`);
        assert.equal(loop.file, db);
        assert.match(loop.session, /^ses_/);
        assert.ok(!out.findings.some((f) => /grep nothing-here/.test(f.message)), 'the search that found nothing is no loop');
        const replay = guardian(run.sb, ['replay', db]);
        assert.equal(replay.code, 1, `${replay.stdout}${replay.stderr}`);
        assert.match(replay.stdout, new RegExp(`\\(${id}\\), 0 line\\(s\\) skipped`));
        // What a person saves with `<agent> export <session>`: read too (`--format kilo` for Kilo's: an export does not say which of the two wrote it).
        const exported = spawnSync(ensureAgent(agent.pkg), ['export', loop.session], { cwd: run.sb.ws, env: { ...run.sb.env, PWD: run.sb.ws }, encoding: 'utf8', timeout: 60_000 });
        assert.equal(exported.status, 0, exported.stderr);
        writeFileSync(path.join(run.sb.dir, 'export.json'), exported.stdout);
        const fromExport = guardian(run.sb, ['replay', ...(id === 'kilo' ? ['--format', 'kilo'] : []), path.join(run.sb.dir, 'export.json')]);
        assert.equal(fromExport.code, 1, `${fromExport.stdout}${fromExport.stderr}`);
        assert.match(fromExport.stdout, /HALT .*Missing script|Missing script/s);
      } finally {
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') run.sb.cleanup();
      }
    });
  });
}

/** How each agent is pointed at an OTLP/HTTP receiver: its own settings (../shared/docs/live-agents.md; the research notes in src/agents/<agent>/telemetry.ts). */
const TELEMETRY: { id: string; protocol: string; service: string; setup: (url: string) => Pick<LiveOptions, 'env' | 'before'> }[] = [
  ...['http/json', 'http/protobuf'].map((protocol) => ({
    id: 'claude',
    protocol,
    service: 'claude-code',
    setup: (url: string) => ({ env: { CLAUDE_CODE_ENABLE_TELEMETRY: '1', OTEL_LOGS_EXPORTER: 'otlp', OTEL_METRICS_EXPORTER: 'none', OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_EXPORTER_OTLP_ENDPOINT: url, OTEL_LOGS_EXPORT_INTERVAL: '500', OTEL_LOG_TOOL_DETAILS: '1' } }),
  })),
  ...['json', 'binary'].map((protocol) => ({
    id: 'codex',
    protocol,
    service: 'codex_exec',
    setup: (url: string) => ({ before: (sb: Sandbox) => appendFileSync(path.join(sb.home, '.codex', 'config.toml'), `\n[otel]\nlog_user_prompt = true\nexporter = { otlp-http = { endpoint = "${url}/v1/logs", protocol = "${protocol}" } }\n`) }),
  })),
  {
    id: 'gemini',
    protocol: 'http (JSON)',
    service: 'gemini-cli',
    setup: (url: string) => ({
      before: (sb: Sandbox) => {
        const file = path.join(sb.home, '.gemini', 'settings.json');
        const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
        writeFileSync(file, JSON.stringify({ ...settings, telemetry: { enabled: true, target: 'local', otlpEndpoint: url, otlpProtocol: 'http', logPrompts: true } }));
      },
    }),
  },
];

describe('live: the agents\' OpenTelemetry, read by `loop-guardian otlp` (no hook, no transcript read)', function () {
  this.timeout(240_000);
  // Gemini CLI dropped its logs at exit in 2 of 4 runs ("Error shutting down SDK:
  // OTLPExporterError: Not Found") while the receiver answered its metrics 404: its shutdown is one
  // Promise.all over the three signals and it exits on the first rejection. The receiver now takes
  // metrics and traces (dropped); 3 of 3 runs passed at the first try after it. One retry stays for
  // an exporter's ordinary timing at exit on a loaded machine.
  this.retries(1);
  for (const t of TELEMETRY) {
    const agent = DRIVERS[t.id] as LiveAgent;
    it(`${agent.pkg.label} (${t.protocol}): its OTLP/HTTP logs show the loop as a finding on the receiver's stdout; the events written into the workspace show it to scan (and the editor)`, async () => {
      const sb = makeSandbox(`${t.id}-otlp`);
      const receiver = spawn(process.execPath, [CLI, 'otlp', '--listen', '127.0.0.1:0', '--workspace', sb.ws], { cwd: sb.ws, env: sb.env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      receiver.stdout.on('data', (d: Buffer) => (out += d.toString()));
      try {
        const port = await new Promise<number>((resolve, reject) => {
          receiver.stderr.on('data', (d: Buffer) => {
            err += d.toString();
            const m = /listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(err);
            if (m) resolve(Number(m[1]));
          });
          receiver.once('exit', () => reject(new Error(`the receiver ended: ${err}`)));
        });
        const run = await liveRun(agent, always(FAILING), { sandbox: sb, hook: false, maxTurns: 4, ...t.setup(`http://127.0.0.1:${port}`) });
        assert.equal(npmRuns(run), 4, describeRun(run));
        // The agents send what is left as they exit; give the receiver a moment to have read it.
        const deadline = Date.now() + 20_000;
        while (!/"action":"halt"/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
        const findings = out.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as { action: string; agent: string; evidence: { file: string }[] });
        const halt = findings.find((f) => f.action === 'halt');
        assert.ok(halt, `stdout: ${out}\nstderr: ${err}\n${describeRun(run)}`);
        assert.equal(halt.agent, agent.pkg.id === 'claude' ? 'claude-code' : agent.pkg.id === 'gemini' ? 'gemini-cli' : agent.pkg.id);
        assert.match(halt.evidence[0]?.file ?? '', new RegExp(`^otlp:${t.service}`));
        const scan = guardian(sb, ['scan']);
        assert.equal(scan.code, 1, `${scan.stdout}${scan.stderr}\nthe receiver said: ${err}`);
        // What each exports of the failure: Claude Code "Shell command failed", Codex the command's output, Gemini CLI its exit code.
        assert.match(scan.stdout, /HALT .*\n.*npm run build-missing: failed \d times with the same error: (Shell command failed|npm error Missing script|Exit Code: 1)/);
        assert.match(scan.stdout, new RegExp(`\\.tmp/otlp/logs/otlp-${t.service}-`));
      } finally {
        receiver.kill('SIGTERM');
        if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') sb.cleanup();
      }
    });
  }
});

describe('live: the same prompt re-sent, where the agent has a prompt hook', function () {
  this.timeout(240_000);
  // How each agent's own CLI resumes its latest conversation headless.
  const resumes: Record<string, (args: string[]) => string[]> = {
    claude: (a) => ['--continue', ...a],
    codex: (a) => ['exec', 'resume', '--last', ...a.slice(1)],
    gemini: (a) => ['--resume', 'latest', ...a],
  };
  for (const [id, resume] of Object.entries(resumes)) {
    const agent = DRIVERS[id] as LiveAgent;
    it(`${agent.pkg.label}: a conversation resumed with the same prompt, the same answer each time, is refused by its prompt hook at the fifth: no model request`, async () => {
      const prompt = 'Make the build pass.';
      const requests: number[] = [];
      let first: LiveRun | undefined;
      let last: LiveRun | undefined;
      try {
        for (let i = 1; i <= 5; i++) {
          const run = await liveRun(agent, () => ({ text: 'I cannot make the build pass: the script is missing.' }), { prompt, maxTurns: 2, ...(first ? { sandbox: first.sb, args: resume } : {}) });
          first ??= run;
          last = run;
          requests.push(run.turns.length);
        }
        assert.deepEqual(requests, [1, 1, 1, 1, 0], `the fifth identical prompt never reached the model\n${last ? describeRun(last) : ''}`);
        // Claude Code shows the reason; Codex and Gemini CLI end the run without printing it (their guardian log has it).
        if (id === 'claude') assert.match(agentSaid(last as LiveRun), /Loop Guardian refused this prompt \(repeated-prompt/, describeRun(last as LiveRun));
        else assert.match(readFileSync(path.join((first as LiveRun).sb.ws, '.tmp', 'guardian', 'guardian.log'), 'utf8'), /refused a prompt .*repeated-prompt/);
      } finally {
        if (first && process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') first.sb.cleanup();
      }
    });
  }
});

describe('live: whether each agent is protected, seen from outside (loop-guardian status)', function () {
  this.timeout(240_000);
  const runs: LiveRun[] = [];
  afterEach(() => {
    for (const r of runs.splice(0)) if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') r.sb.cleanup();
  });
  type Status = { agents: { id: string; state: string; problems: { cause: string; fix: string }[] }[] };
  const status = (run: LiveRun): Status => {
    const r = guardian(run.sb, ['status', '--json']);
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout) as Status;
  };

  it('Codex with its hook not trusted runs every call unseen: status says "installed but not running", names the hook trust and the fix; trusted, it is "enforced"', async () => {
    const codex = DRIVERS.codex as LiveAgent;
    // What a user who never approved the hook in /hooks runs: no --dangerously-bypass-hook-trust.
    const untrusted = await liveRun(codex, always(FAILING), { maxTurns: 5, args: (a) => a.filter((x) => x !== '--dangerously-bypass-hook-trust') });
    runs.push(untrusted);
    assert.equal(npmRuns(untrusted), 5, `the hook never ran: every call ran\n${describeRun(untrusted)}`);
    const seen = status(untrusted).agents.find((a) => a.id === 'codex');
    assert.equal(seen?.state, 'not-running', JSON.stringify(seen));
    assert.match(JSON.stringify(seen?.problems), /not trusted/);
    assert.match(JSON.stringify(seen?.problems), /\/hooks/);
    const trusted = await liveRun(codex, always(FAILING), { maxTurns: 4 });
    runs.push(trusted);
    assert.equal(status(trusted).agents.find((a) => a.id === 'codex')?.state, 'enforced');
  });

  it('Cline, right after its hook refused a call and cancelled the task: status says "enforced" (its hook is a folder of event files)', async () => {
    const run = await liveRun(DRIVERS.cline as LiveAgent, always(FAILING), { maxTurns: 6 });
    runs.push(run);
    assert.ok(refusedRecords(run) >= 1, describeRun(run));
    assert.equal(npmRuns(run), 2, describeRun(run));
    const seen = status(run).agents.find((a) => a.id === 'cline');
    assert.equal(seen?.state, 'enforced', JSON.stringify(seen));
  });

  // A missing launcher (a fresh clone where the guardian was never installed), or a stale one (the
  // install it starts gone, its node gone): the registered command reads STOP_ALL itself and answers
  // each event in the agent's form, the prompt event's included, so that under STOP the prompt
  // never reaches the model (Claude Code: UserPromptSubmit `decision: "block"`, 0 requests,
  // ../shared/docs/live-agents.md; issue 32 item 10: 1 request with the PreToolUse answer).
  for (const [id, launcher] of [['claude', 'missing'], ['codex', 'missing'], ['gemini', 'missing'], ['claude', 'stale']] as const) {
    it(`${(DRIVERS[id] as LiveAgent).pkg.label}, a ${launcher} launcher (${launcher === 'missing' ? 'a fresh clone where the guardian was never installed' : 'the install it starts and its node gone'}): a committed STOP_ALL still refuses every call, and the prompt reaches no model (0 requests)`, async () => {
      const before = (sb: Sandbox) => {
        const bin = path.join(sb.home, '.loop-guardian', 'bin', 'loop-guardian');
        if (launcher === 'missing') return rmSync(path.join(sb.home, '.loop-guardian'), { recursive: true, force: true });
        // What the launcher holds after the extension was uninstalled and nvm's Node removed.
        writeFileSync(bin, readFileSync(bin, 'utf8').replace(/^cli='[^']*'$/m, "cli='/gone/extension/dist/cli.js'").replace(/^node='[^']*'$/m, "node='/gone/nvm/node'"));
      };
      const run = await liveRun(DRIVERS[id] as LiveAgent, always(FAILING), { maxTurns: 3, stopBefore: `STOP ${new Date().toISOString()}\nreason: the team stopped every agent\n`, before });
      runs.push(run);
      if (launcher === 'stale') assert.match(readFileSync(path.join(run.sb.home, '.loop-guardian', 'bin', 'loop-guardian'), 'utf8'), /cli='\/gone\/extension/);
      assert.equal(npmRuns(run), 0, `nothing ran under STOP\n${describeRun(run)}`);
      assert.equal(run.turns.length, 0, `model requests under STOP: the prompt reached the model\n${describeRun(run)}`);
    });
  }

  it('a missing launcher (a teammate without the guardian): every call runs, and status says so with the fix', async () => {
    const run = await liveRun(DRIVERS.claude as LiveAgent, always(FAILING), { maxTurns: 4, before: (sb) => rmSync(path.join(sb.home, '.loop-guardian'), { recursive: true, force: true }) });
    runs.push(run);
    assert.equal(npmRuns(run), 4, describeRun(run));
    const seen = status(run).agents.find((a) => a.id === 'claude');
    assert.equal(seen?.state, 'not-running', JSON.stringify(seen));
    assert.match(JSON.stringify(seen?.problems), /launcher .* is missing/);
  });
});

describe('live: STOP reaches an agent wherever it started (a subfolder, a nested repository)', function () {
  this.timeout(240_000);
  const runs: LiveRun[] = [];
  afterEach(() => {
    for (const r of runs.splice(0)) if (process.env.LOOP_GUARDIAN_KEEP_LIVE !== '1') r.sb.cleanup();
  });
  const keep = (r: LiveRun) => (runs.push(r), r);
  /** The lines of a file the agent's commands append to, in a folder of the workspace. */
  const lines = (run: LiveRun, rel: string) => (existsSync(path.join(run.sb.ws, rel)) ? readFileSync(path.join(run.sb.ws, rel), 'utf8').trim().split('\n') : []);
  const stepper = () => {
    let n = 0;
    return (turn: Turn, a: LiveAgent) => a.shell(`echo step-${++n} >> steps.txt`, turn.tools);
  };
  const nestedRepo = (sb: Sandbox) => {
    const dir = path.join(sb.ws, 'vendor', 'lib');
    mkdirSync(dir, { recursive: true });
    const r = spawnSync('git', ['init', '-q'], { cwd: dir, env: sb.env, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
  };

  for (const id of ['claude', 'gemini']) {
    const agent = DRIVERS[id] as LiveAgent;
    // Gemini CLI reads .gemini/settings.json in the folder it starts in only (docs/agents.md): the
    // fix status and init name, a registration in that subfolder too, whose hook reads the root's STOP_ALL.
    const fix = id === 'gemini' ? { before: (sb: Sandbox) => assert.equal(guardian(sb, ['init', 'gemini', '--workspace', 'src']).code, 0) } : {};
    it(`${agent.pkg.label} started in src/, its hook installed at the root${id === 'gemini' ? ' (and, as status says to, in src/)' : ''}: STOP written at the root mid-run refuses the next call and ends the run (<= 1 model request after it)`, async () => {
      const run = keep(await liveRun(agent, stepper(), { cwd: 'src', stopAtTurn: 3, maxTurns: 10, ...fix }));
      assert.equal(lines(run, 'src/steps.txt').length, 2, `the two calls before STOP ran, none after\n${describeRun(run)}`);
      const after = turnsAfter(run, 3);
      measure(agent, 'stopSubfolder', after);
      assert.ok(after <= 1, `model requests after STOP: ${after} (goal <= 1)\n${describeRun(run)}`);
      assert.match(agentSaid(run), STOPPED, `the STOP reason reached the agent\n${describeRun(run)}`);
      assert.equal(run.result.timedOut, false, describeRun(run));
      // Its calls recorded into the project, not into a .tmp/ of the subfolder.
      assert.equal(existsSync(path.join(run.sb.ws, 'src', '.tmp', 'current')), false, describeRun(run));
      assert.ok(hookRecords(run).length >= 2, describeRun(run));
    });
  }

  it('Gemini CLI started in src/ with its hook only at the root runs no hook (every call runs, under STOP too); status at the root says so, with the fix', async () => {
    const run = keep(await liveRun(DRIVERS.gemini as LiveAgent, stepper(), { cwd: 'src', stopAtTurn: 3, maxTurns: 5 }));
    assert.equal(lines(run, 'src/steps.txt').length, 5, `its own CLI ran every call: no hook\n${describeRun(run)}`);
    const status = guardian(run.sb, ['status']);
    assert.match(status.stdout, /its hook runs only when Gemini CLI is started in .* itself: started in a subfolder it reads no hook/, status.stdout);
    assert.match(status.stdout, /loop-guardian init gemini --workspace <subfolder>/, status.stdout);
  });

  it('Claude Code started in src/: a healthy edit -> test -> edit -> test until green is never refused', async () => {
    const check = "const v=require('fs').readFileSync('value.txt','utf8').trim(); if (v!=='4') { console.error('expected 4, got '+v); process.exit(1) } console.log('green')";
    const steps: string[] = [];
    for (let v = 1; v <= 4; v++) steps.push(`echo ${v} > value.txt`, 'node check.js');
    const run = keep(
      await liveRun(DRIVERS.claude as LiveAgent, (turn, a) => (turn.index <= steps.length ? a.shell(steps[turn.index - 1] as string, turn.tools) : { text: 'Green: done.' }), { cwd: 'src', files: { 'src/check.js': `${check}\n` }, maxTurns: 12 }),
    );
    assert.doesNotMatch(agentSaid(run), REFUSED, describeRun(run));
    assert.equal(refusedRecords(run), 0, describeRun(run));
    assert.equal(readFileSync(path.join(run.sb.ws, 'src', 'value.txt'), 'utf8').trim(), '4', describeRun(run));
    assert.match(agentSaid(run), /green/, describeRun(run));
    assert.ok(hookRecords(run).length >= 8, `its hook ran, recording into the project\n${describeRun(run)}`);
  });

  for (const id of ['claude', 'gemini']) {
    const agent = DRIVERS[id] as LiveAgent;
    // Claude Code's project as an older init left it: its registration, no .github/guardian (then found by the registration).
    const older = id === 'claude';
    it(`${agent.pkg.label} working in the project: \`loop-guardian stop\` run in a nested repository (vendor/lib, its own git init${older ? '; the project marked only by its registration' : ''}) writes the project's STOP_ALL and stops it`, async () => {
      let stop: ReturnType<typeof guardian> | undefined;
      const run = keep(
        await liveRun(agent, stepper(), {
          maxTurns: 10,
          before: (sb) => {
            nestedRepo(sb);
            if (older) rmSync(path.join(sb.ws, '.github'), { recursive: true, force: true });
          },
          atTurn: { turn: 3, run: (sb) => (stop = guardian(sb, ['stop', '--reason', 'stopped from vendor/lib'], 'vendor/lib')) },
        }),
      );
      assert.equal(stop?.code, 0, stop?.stderr);
      assert.match(stop?.stdout ?? '', new RegExp(`STOP_ALL: STOP .*, in ${run.sb.ws}/\\.github/guardian/STOP_ALL`), stop?.stdout);
      assert.match(stop?.stdout ?? '', new RegExp(`reaches .*${agent.pkg.label}`), stop?.stdout);
      assert.match(stop?.stdout ?? '', /In the nested repository .*vendor\/lib/, stop?.stdout);
      assert.equal(existsSync(path.join(run.sb.ws, 'vendor', 'lib', '.github')), false, 'nothing written in the nested repository');
      assert.equal(lines(run, 'steps.txt').length, 2, `the two calls before STOP ran, none after\n${describeRun(run)}`);
      const after = turnsAfter(run, 3);
      measure(agent, 'stopNested', after);
      assert.ok(after <= 1, `model requests after STOP: ${after} (goal <= 1)\n${describeRun(run)}`);
      assert.match(agentSaid(run), /stopped from vendor\/lib/, `the STOP reason reached the agent\n${describeRun(run)}`);
      // status run in the nested repository tells the project's STOP.
      const status = guardian(run.sb, ['status', '--json'], 'vendor/lib');
      const seen = JSON.parse(status.stdout) as { workspace: string; stopAll: { status: string } };
      assert.equal(seen.workspace, run.sb.ws);
      assert.equal(seen.stopAll.status, 'STOP');
    });
  }
});

after(() => {
  if (measured.size === 0) return;
  const rows = [...measured].map(([id, m]) => `  ${id.padEnd(12)} ${String(m.halt ?? '-').padStart(18)} ${String(m.stopMid ?? '-').padStart(18)} ${String(m.stopBefore ?? '-').padStart(20)} ${String(m.readHalt ?? '-').padStart(22)} ${String(m.editHalt ?? '-').padStart(22)} ${String(m.unseenHalt ?? '-').padStart(22)} ${String(m.stopSubfolder ?? '-').padStart(20)} ${String(m.stopNested ?? '-').padStart(22)}`);
  console.log(['', '  model requests (live agents)', `  ${'agent'.padEnd(12)} ${'after the halt'.padStart(18)} ${'after STOP (mid)'.padStart(18)} ${'with STOP before'.padStart(20)} ${'after a refused read'.padStart(22)} ${'after a refused edit'.padStart(22)} ${'after an unseen loop'.padStart(22)} ${'after STOP, in src/'.padStart(20)} ${'after stop in vendor/'.padStart(22)}`, ...rows, `  goals: after the halt <= 2, after STOP <= 1, for ${[...ENDABLE].join(', ')}; Codex cannot be ended from a hook`].join('\n'));
});
