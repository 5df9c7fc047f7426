// Promise-based calls into the worker. `latest(channel, ...)` drops replies
// that a newer call on the same channel has superseded, so a slow reply to
// an old edit never overwrites a newer view.
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

  constructor() {
    this.worker = new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
    this.worker.onmessage = (event: MessageEvent<Response>) => {
      const resolve = this.pending.get(event.data.id);
      this.pending.delete(event.data.id);
      resolve?.(event.data);
    };
  }

  call<T>(method: Method, ...args: unknown[]): Promise<Reply<T>> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, (r) => resolve({ result: r.result as T, ms: r.ms, stale: false }));
      this.worker.postMessage({ id, method, args });
    });
  }

  async latest<T>(channel: string, method: Method, ...args: unknown[]): Promise<Reply<T>> {
    const ticket = (this.channels.get(channel) ?? 0) + 1;
    this.channels.set(channel, ticket);
    const reply = await this.call<T>(method, ...args);
    return { ...reply, stale: this.channels.get(channel) !== ticket };
  }
}
