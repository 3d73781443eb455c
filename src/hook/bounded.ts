/** `fn`'s value, or `fallback` where it throws (a state file that cannot be read or written never changes a decision). */
export function safely<T>(fn: () => T, fallback: T): T {
  try {
    return fn();
  } catch {
    return fallback;
  }
}

/** `work`'s value within `ms`, else (or where it fails) `fallback`. */
export function withTimeout<T>(work: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([work.catch(() => fallback), new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)))]).finally(() => timer && clearTimeout(timer));
}
