import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The guardian's own per-user folder, the one place outside a workspace it writes to (the
 * launcher, the hook's code cache): `$LOOP_GUARDIAN_HOME`, else `~/.loop-guardian`. No other
 * import: the hook's small entry reads it before anything else is loaded.
 */
export function guardianHome(env: NodeJS.ProcessEnv = process.env): string {
  const set = env.LOOP_GUARDIAN_HOME;
  return set !== undefined && set !== '' ? resolve(set) : join(env.HOME ?? homedir(), '.loop-guardian');
}
