/** What a spied KV saw: reads, commits, and commits that wrote something. */
export interface KvCounts {
  gets: number;
  commits: number;
  writes: number;
}

/** A KV that counts its reads and commits (the rest passes through). */
export function spyKv(kv: Deno.Kv): { kv: Deno.Kv; counts: KvCounts; reset(): void } {
  const counts: KvCounts = { gets: 0, commits: 0, writes: 0 };
  const bind = <T extends object>(target: T, prop: PropertyKey) => {
    const value = Reflect.get(target, prop);
    return typeof value === "function" ? value.bind(target) : value;
  };
  const spied = new Proxy(kv, {
    get(target, prop) {
      if (prop === "get") {
        return (...args: Parameters<Deno.Kv["get"]>) => {
          counts.gets++;
          return target.get(...args);
        };
      }
      if (prop !== "atomic") return bind(target, prop);
      return () => {
        const op = target.atomic();
        let mutations = 0;
        const wrapped: Deno.AtomicOperation = new Proxy(op, {
          get(o, q) {
            if (q === "commit") {
              return async () => {
                const res = await o.commit();
                counts.commits++;
                if (res.ok && mutations > 0) counts.writes++;
                return res;
              };
            }
            const fn = bind(o, q);
            if (typeof fn !== "function") return fn;
            return (...args: unknown[]) => {
              if (q !== "check") mutations++;
              fn(...args);
              return wrapped;
            };
          },
        });
        return wrapped;
      };
    },
  });
  return {
    kv: spied,
    counts,
    reset() {
      counts.gets = counts.commits = counts.writes = 0;
    },
  };
}
