import { join } from 'node:path';
import { requireWithCodeCache } from './codeCache';
import type * as Gate from './gate';
import type * as Server from './server';
import type * as Turn from './turn';

declare const __BUNDLED__: boolean | undefined;

/** The engine and its detectors (gate.ts), loaded when a call or a prompt must be replayed. */
export function gateModule(): typeof Gate {
  return bundledModule<typeof Gate>('cli-gate.js', 'gate');
}

/** The agents' transcript readers (turn.ts), loaded before a prompt and where a transcript is read. */
export function turnModule(): typeof Turn {
  return bundledModule<typeof Turn>('cli-turn.js', 'turn');
}

/** The hook server (server.ts), loaded by `loop-guardian hook-server` only. */
export function serverModule(): typeof Server {
  return bundledModule<typeof Server>('cli-hook-server.js', 'server');
}

/** A bundle of its own, from its code cache; the module itself where nothing is bundled (tests on out/). */
function bundledModule<T>(bundle: string, module: string): T {
  const bundled = typeof __BUNDLED__ === 'boolean' && __BUNDLED__;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return bundled ? requireWithCodeCache<T>(join(__dirname, bundle)) : (require(join(__dirname, module)) as T);
}
