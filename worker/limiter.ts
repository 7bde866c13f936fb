/** Runs at most `size` tasks at once; the others wait their turn in order. */
export class Limiter {
  #size: number;
  #active = 0;
  #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Runs `task` once a place is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
  }
}
