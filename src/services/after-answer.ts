// Work a request hands over so that its answer goes out before any of it is done: how long the
// answer takes then says nothing about what the work found (whether an address has an account).
// Tasks run one at a time, and at most `capacity` wait, so a flood of requests cannot pile up
// unbounded work on the event loop or the database; past that the caller refuses the request,
// before looking at its input.

/** Resolves once the response has gone out (or its connection closed): where a task starts. */
export function answerSent(res: { once(event: 'close', listener: () => void): unknown }): Promise<void> {
  return new Promise((resolve) => res.once('close', () => resolve()));
}

export interface AfterAnswerLog {
  error(obj: object, msg: string): void;
}

export class AfterAnswer {
  private readonly waiting: { task: () => Promise<void>; log: AfterAnswerLog; what: string }[] = [];
  private running: Promise<void> | null = null;

  constructor(readonly capacity: number) {}

  /** Queues `task`; false (nothing queued) when `capacity` tasks wait already. */
  offer(what: string, log: AfterAnswerLog, task: () => Promise<void>): boolean {
    if (this.waiting.length >= this.capacity) return false;
    this.waiting.push({ task, log, what });
    this.running ??= this.runAll();
    return true;
  }

  /** Resolves once every task queued so far (and any queued meanwhile) has finished. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async runAll(): Promise<void> {
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      try {
        await next.task();
      } catch (err) {
        // The request was answered already; the failure is the operator's to see, without its input.
        next.log.error({ err: { name: (err as Error).name, code: (err as { code?: unknown }).code } }, `${next.what} failed after the answer`);
      }
    }
    this.running = null;
  }
}
