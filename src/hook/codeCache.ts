import { closeSync, constants, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { guardianHome } from '../state/guardianHome';

/**
 * The folder of the code caches: `cache/` in the guardian's own per-user folder
 * (`$LOOP_GUARDIAN_HOME`, else `~/.loop-guardian`, where the launcher lives): the one place outside
 * a workspace the guardian writes to, never a shared one.
 */
function cacheFolder(): string {
  return join(guardianHome(), 'cache');
}

/**
 * Runs a bundle as `require` would, compiled from a V8 code cache, and returns its exports: the
 * hook starts a process for every tool call an agent makes, and compiling its bundle was about a
 * third of its own time. The cache lives in `~/.loop-guardian/cache/` (beside the launcher), one
 * file per bundle, named by the Node/V8 version and the bundle's inode, size and modification
 * time: V8 itself checks only a source's length, so a rebuilt bundle must get a file of its own. It
 * is written at exit, atomically, when it was missing or V8 rejected it (another Node, other
 * flags), with the functions compiled while the process ran; any problem with it means compiling
 * as usual. `NODE_DISABLE_COMPILE_CACHE=1` turns it off. A bundle is run once per process.
 */
export function requireWithCodeCache<T>(file: string): T {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if (process.env.NODE_DISABLE_COMPILE_CACHE) return require(file) as T;
  const done = loaded.get(file);
  if (done !== undefined) return done.exports as T;
  // One opening for the bundle's text and the identity its cache is named by: a rebuild in between
  // cannot give the new text the old build's cache.
  const fd = openSync(file, constants.O_RDONLY);
  let source: string;
  let st: ReturnType<typeof fstatSync>;
  try {
    st = fstatSync(fd);
    source = readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  const dir = cacheFolder();
  let cacheFile: string | undefined;
  let cached: Buffer | undefined;
  try {
    cacheFile = join(dir, `${basename(file)}-${process.versions.v8}-${process.arch}-${st.ino}-${st.size}-${Math.round(st.mtimeMs * 1000)}.cache`);
    cached = readCache(cacheFile);
  } catch {
    // No cache yet (or no way to name one): compiled, and cached at exit.
  }
  const script = new Script(wrap(source), { filename: file, ...(cached ? { cachedData: cached } : {}) });
  if (cacheFile !== undefined && (cached === undefined || script.cachedDataRejected === true)) {
    const target = cacheFile;
    // At exit, so that the functions compiled while it ran are in the cache too.
    process.once('exit', () => writeCache(dir, `${basename(file)}-`, target, script));
  }
  const module = { exports: {} };
  loaded.set(file, module);
  (script.runInThisContext() as (...args: unknown[]) => void).call(module.exports, module.exports, createRequire(file), module, file, dirname(file));
  return module.exports as T;
}

/** The bundles run in this process, by file. */
const loaded = new Map<string, { exports: unknown }>();

/** The most a cache file may hold (the hook's is about 100 KB, its replay's about 140 KB). */
const MAX_CACHE_BYTES = 16 << 20;

/**
 * A cache file's bytes, opened without blocking and read only when it is a regular file of
 * reasonable size: nothing put in its place (a FIFO, a huge file) can hold the hook up.
 */
function readCache(file: string): Buffer | undefined {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_CACHE_BYTES) return undefined;
    const buf = Buffer.alloc(st.size);
    return readSync(fd, buf, 0, st.size, 0) === st.size ? buf : undefined;
  } finally {
    closeSync(fd);
  }
}

/** Writes the cache `file`, and removes the other files of the same bundle (`prefix`): its earlier builds'. */
function writeCache(dir: string, prefix: string, file: string, script: Script): void {
  try {
    // Only inside a guardian folder that is there: one deleted (the guardian taken off the machine,
    // a test's folder removed) is never made again by a process that outlived it.
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const temp = `${file}.${process.pid}.tmp`;
    // `wx`: a file already at the temporary name (or a FIFO) is never written into.
    writeFileSync(temp, script.createCachedData(), { mode: 0o600, flag: 'wx' });
    renameSync(temp, file);
    for (const name of readdirSync(dir)) if (name.startsWith(prefix) && name.endsWith('.cache') && join(dir, name) !== file) unlinkSync(join(dir, name));
  } catch {
    // A cache that cannot be written costs the next run a compile, nothing more.
  }
}
