// The entry point only picks a path: the hook runs before every tool call an agent makes, so it
// loads a bundle of its own (no schema library, no command parsing) instead of the whole CLI,
// compiled from a code cache (hook/codeCache.ts).
import { join } from 'node:path';
import { requireWithCodeCache } from './hook/codeCache';

declare const __BUNDLED__: boolean | undefined;
const bundled = typeof __BUNDLED__ === 'boolean' && __BUNDLED__;
const hook = process.argv[2] === 'hook' || process.argv[2] === 'hook-server';
const target = bundled ? (hook ? 'cli-hook.js' : 'cli-main.js') : hook ? 'cli/hookRun' : 'cli/run';
// eslint-disable-next-line @typescript-eslint/no-require-imports
if (bundled && hook) requireWithCodeCache(join(__dirname, target));
else require(join(__dirname, target));
