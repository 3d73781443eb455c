import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/*
 * The agents' own released CLIs, pinned, installed from the npm registry into a git-ignored cache
 * (`.vscode-test/agents/<id>-<version>/`, beside code-server's), once per machine. Install scripts
 * are not run: every binary these packages need ships inside a registry package (Claude Code's in
 * `@anthropic-ai/claude-code-linux-x64`, Codex's in its platform package), and a postinstall that
 * downloads would fail offline. Versions: ../shared/docs/live-agents.md, where each was verified.
 */

export const ROOT = path.resolve(__dirname, '..', '..', '..');
const CACHE = path.join(ROOT, '.vscode-test', 'agents');

export interface AgentPackage {
  /** The registry id of the agent in the guardian (`init <id>`). */
  readonly id: string;
  readonly label: string;
  readonly spec: string;
  readonly version: string;
  /** The executable, relative to the install's node_modules. */
  readonly bin: string;
}

export const AGENT_PACKAGES: Readonly<Record<string, AgentPackage>> = {
  claude: { id: 'claude', label: 'Claude Code', spec: '@anthropic-ai/claude-code', version: '2.1.328', bin: '@anthropic-ai/claude-code-linux-x64/claude' },
  codex: { id: 'codex', label: 'Codex', spec: '@openai/codex', version: '0.169.0', bin: '.bin/codex' },
  gemini: { id: 'gemini', label: 'Gemini CLI', spec: '@google/gemini-cli', version: '0.61.0', bin: '.bin/gemini' },
  'copilot-cli': { id: 'copilot-cli', label: 'Copilot CLI', spec: '@github/copilot', version: '1.0.102', bin: '.bin/copilot' },
  cline: { id: 'cline', label: 'Cline CLI', spec: 'cline', version: '3.0.65', bin: '.bin/cline' },
  qwen: { id: 'qwen', label: 'Qwen Code', spec: '@qwen-code/qwen-code', version: '0.24.4', bin: '.bin/qwen' },
  // Both ship their binary in a platform package (the wrapper's bin is put in place by a postinstall).
  kilo: { id: 'kilo', label: 'Kilo CLI', spec: '@kilocode/cli', version: '7.7.7', bin: '@kilocode/cli-linux-x64/bin/kilo' },
  opencode: { id: 'opencode', label: 'opencode', spec: 'opencode-ai', version: '1.18.33', bin: 'opencode-linux-x64/bin/opencode' },
};

function installDir(pkg: AgentPackage): string {
  return path.join(CACHE, `${pkg.id}-${pkg.version}`);
}

/** The agent's executable, installing the pinned version first when the cache lacks it. */
export function ensureAgent(pkg: AgentPackage): string {
  const dir = installDir(pkg);
  const bin = path.join(dir, 'node_modules', pkg.bin);
  const done = path.join(dir, '.installed');
  if (existsSync(done) && existsSync(bin)) return bin;
  // Installed beside, then moved in: an interrupted install never looks like a finished one.
  const staging = `${dir}.partial`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  writeFileSync(path.join(staging, 'package.json'), JSON.stringify({ name: `agent-${pkg.id}`, private: true }));
  process.stderr.write(`[agents] installing ${pkg.spec}@${pkg.version} into ${path.relative(ROOT, dir)}\n`);
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--ignore-scripts', '--loglevel=error', `${pkg.spec}@${pkg.version}`], { cwd: staging, stdio: ['ignore', 'ignore', 'inherit'] });
  if (!existsSync(path.join(staging, 'node_modules', pkg.bin))) throw new Error(`${pkg.spec}@${pkg.version} installed, but ${pkg.bin} is missing`);
  const installed = JSON.parse(readFileSync(path.join(staging, 'node_modules', ...pkg.spec.split('/'), 'package.json'), 'utf8')) as { version: string };
  if (installed.version !== pkg.version) throw new Error(`${pkg.spec}: installed ${installed.version}, pinned ${pkg.version}`);
  writeFileSync(path.join(staging, '.installed'), `${pkg.spec}@${pkg.version}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return bin;
}

if (require.main === module) {
  const ids = process.argv.slice(2);
  for (const id of ids.length > 0 ? ids : Object.keys(AGENT_PACKAGES)) {
    const pkg = AGENT_PACKAGES[id];
    if (pkg === undefined) throw new Error(`unknown agent ${id}`);
    console.log(ensureAgent(pkg));
  }
}
