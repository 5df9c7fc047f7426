// Promise-based calls into the worker. `latest(channel, ...)` drops replies
// that a newer call on the same channel has superseded, so a slow reply to
// an old edit never overwrites a newer view; and it keeps at most one call
// per channel in the worker: calls made meanwhile wait, and only the newest
// of them is sent (the others come back stale without costing the worker a
// propagation), so fast typing on a large module never queues up work.
import type { Method, Response } from "./worker";

export interface Reply<T> {
  result: T;
  ms: number;
  stale: boolean;
}

export class CoreClient {
  private worker: Worker;
  private nextId = 1;
  private pending = new Map<number, (r: Response) => void>();
  private channels = new Map<string, number>();
  private busy = new Set<string>();
  private waiters = new Map<string, (() => void)[]>();

  constructor() {
    this.worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    this.worker.onmessage = (event: MessageEvent<Response>) => {
      const resolve = this.pending.get(event.data.id);
      this.pending.delete(event.data.id);
      resolve?.(event.data);
    };
    // A worker that dies (or cannot start) fails its calls instead of
    // leaving them waiting.
    this.worker.onerror = (event: ErrorEvent) => {
      const error = `the core's worker failed: ${event.message || "no message"}`;
      for (const [id, resolve] of this.pending) resolve({ id, result: { ok: false, error }, ms: 0 });
      this.pending.clear();
    };
  }

  call<T>(method: Method, ...args: unknown[]): Promise<Reply<T>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, (r) => resolve({ result: r.result as T, ms: r.ms, stale: false }));
      this.worker.postMessage({ id, method, args });
    });
  }

  latest<T>(channel: string, method: Method, ...args: unknown[]): Promise<Reply<T>> {
    return this.latestOf(channel, () => this.call<T>(method, ...args));
  }

  /** `latest` for work that is more than one call (a pool's comparison). */
  async latestOf<T>(channel: string, work: () => Promise<Reply<T>>): Promise<Reply<T>> {
    const ticket = (this.channels.get(channel) ?? 0) + 1;
    this.channels.set(channel, ticket);
    while (this.busy.has(channel)) {
      await new Promise<void>((wake) => this.waiters.set(channel, [...(this.waiters.get(channel) ?? []), wake]));
      if (this.channels.get(channel) !== ticket) return { result: undefined as T, ms: 0, stale: true };
    }
    this.busy.add(channel);
    try {
      const reply = await work();
      return { ...reply, stale: this.channels.get(channel) !== ticket };
    } finally {
      this.busy.delete(channel);
      const waiting = this.waiters.get(channel) ?? [];
      this.waiters.delete(channel);
      for (const wake of waiting) wake();
    }
  }
}
