#!/usr/bin/env node
// The README's path from a plain clone (issue 33, item 6): `git clone`, `npm ci`, `npm run package`,
// `npm run test:unit`, each run as a person types it in the clone's folder. The clone is of this
// repository's committed HEAD (what a person would get), in a folder of its own; `npm ci` installs
// from npm's cache (`--prefer-offline`: the machine may have no network; a package missing there is
// still fetched). It must: install without an engine warning (the README's Node is enough), build the
// .vsix without the test configurations in it, and find and pass the unit tests with nothing built
// beforehand. `LOOP_GUARDIAN_KEEP_LIVE=1` keeps the clone.
'use strict';
const assert = require('node:assert/strict');
const { spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');

function run(cwd, cmd, args, timeoutMs) {
  const t0 = Date.now();
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false', CI: '1' } });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const ms = Date.now() - t0;
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}, ${ms} ms) in ${cwd}:\n${out.slice(-4000)}`);
  return { out, ms };
}

function main() {
  const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'lg-clone-')));
  const repo = path.join(tmp, 'agent-loop-guardian');
  try {
    run(tmp, 'git', ['clone', '--quiet', ROOT, repo], 120_000);
    assert.ok(!fs.existsSync(path.join(repo, 'node_modules')) && !fs.existsSync(path.join(repo, 'out')) && !fs.existsSync(path.join(repo, 'dist')), 'a plain clone: nothing installed or built');
    const ci = run(repo, 'npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], 600_000);
    assert.doesNotMatch(ci.out, /EBADENGINE/, `npm ci warns about the engine:\n${ci.out}`);
    const pkg = run(repo, 'npm', ['run', 'package'], 300_000);
    const vsix = path.join(repo, 'loop-guardian.vsix');
    assert.ok(fs.existsSync(vsix), `npm run package made no loop-guardian.vsix:\n${pkg.out.slice(-2000)}`);
    const files = execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean);
    assert.ok(files.includes('extension/dist/extension.js'), `the .vsix holds the extension: ${files.join(', ')}`);
    const stray = files.filter((f) => /\.mocharc|\/(?:src|test|out|node_modules)\//.test(f));
    assert.deepEqual(stray, [], 'no test configuration, sources or node_modules in the .vsix');
    const unit = run(repo, 'npm', ['run', 'test:unit'], 900_000);
    const passing = /(\d+) passing/.exec(unit.out);
    assert.ok(passing && Number(passing[1]) > 100, `npm run test:unit found and ran the unit tests:\n${unit.out.slice(-3000)}`);
    assert.doesNotMatch(unit.out, /\d+ failing/, unit.out.slice(-3000));
    console.log(`fresh clone: npm ci ${Math.round(ci.ms / 1000)} s (no engine warning), npm run package ${Math.round(pkg.ms / 1000)} s (${files.length} files in the .vsix, no test configuration), npm run test:unit ${Math.round(unit.ms / 1000)} s (${passing[1]} passing, built first by itself) (1 passed, 0 failed)`);
  } finally {
    if (process.env.LOOP_GUARDIAN_KEEP_LIVE === '1') console.log(`kept: ${repo}`);
    else fs.rmSync(tmp, { recursive: true, force: true });
  }
}

try {
  main();
} catch (err) {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
}
