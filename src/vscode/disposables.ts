import type * as vscode from 'vscode';

/** Owns disposables and disposes them together, newest first. */
export class DisposableStore implements vscode.Disposable {
  private items: vscode.Disposable[] = [];
  private disposed = false;

  add<T extends vscode.Disposable>(item: T): T {
    if (this.disposed) item.dispose();
    else this.items.push(item);
    return item;
  }

  dispose(): void {
    this.disposed = true;
    const items = this.items.reverse();
    this.items = [];
    for (const d of items) {
      try {
        d.dispose();
      } catch {
        // One failing disposal must not keep the rest alive.
      }
    }
  }
}
