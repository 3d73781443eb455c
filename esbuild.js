// Bundles the extension (vscode is provided by the host) and the CLI (with a shebang).
const esbuild = require('esbuild');
const { version } = require('./package.json');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: !production,
  minify: production,
  logLevel: 'warning',
  define: { __VERSION__: JSON.stringify(version) },
};

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  // dist/cli.js only picks dist/cli-hook.js (the agents' hook: small, fast to start) or dist/cli-main.js.
  { ...common, entryPoints: ['src/cli.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' }, define: { ...common.define, __BUNDLED__: 'true' } },
  { ...common, entryPoints: ['src/cli/run.ts'], outfile: 'dist/cli-main.js' },
  { ...common, entryPoints: ['src/cli/hookRun.ts'], outfile: 'dist/cli-hook.js', define: { ...common.define, __BUNDLED__: 'true' } },
  // The configuration schema (zod), loaded by the hook only when its cached configuration is stale.
  { ...common, entryPoints: ['src/state/configFile.ts'], outfile: 'dist/cli-config.js' },
];

async function run() {
  if (watch) {
    for (const b of builds) await (await esbuild.context(b)).watch();
    return;
  }
  await Promise.all(builds.map((b) => esbuild.build(b)));
  require('fs').chmodSync('dist/cli.js', 0o755);
}

run().catch((err) => {
  console.error(err);
  process.exit(1);
});
