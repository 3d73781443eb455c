/** An item of a `LinkedOrder`: its neighbours in the order, kept on the item itself. */
export interface Linked<T> {
  older: T | undefined;
  newer: T | undefined;
}

/**
 * Items oldest first (in the order they were added, or last moved to the end), for a bound that
 * drops the oldest: a list through the items themselves. The engine's bounded state (every
 * session's keys, every session's failing signatures) holds thousands of items that come and go
 * on every event; a `Set` of them would hash each one, and grow and rehash its table as they do,
 * every table one more object for the collector to copy. Here adding, moving and deleting an
 * item writes a few fields.
 */
export class LinkedOrder<T extends Linked<T>> {
  private oldest: T | undefined;
  private newest: T | undefined;
  size = 0;

  /** Whether the item is in the order. */
  has(item: T): boolean {
    return item.newer !== undefined || this.newest === item;
  }

  /** Adds an item that is not in the order, as the newest. */
  add(item: T): void {
    item.older = this.newest;
    item.newer = undefined;
    if (this.newest !== undefined) this.newest.newer = item;
    else this.oldest = item;
    this.newest = item;
    this.size++;
  }

  /** Takes the item out (nothing when it is not in). */
  delete(item: T): void {
    if (!this.has(item)) return;
    if (item.older !== undefined) item.older.newer = item.newer;
    else this.oldest = item.newer;
    if (item.newer !== undefined) item.newer.older = item.older;
    else this.newest = item.older;
    item.older = undefined;
    item.newer = undefined;
    this.size--;
  }

  /** The item becomes the newest. */
  moveToEnd(item: T): void {
    if (this.newest === item) return;
    this.delete(item);
    this.add(item);
  }

  first(): T | undefined {
    return this.oldest;
  }
}
