# The whole service in one process (API, OTP and worker roles), as `deno task start` runs it.
FROM denoland/deno:2.5.6

WORKDIR /app
# Everything below runs as the image's unprivileged user `deno`, so the dependency cache
# (DENO_DIR=/deno-dir, owned by deno) and the app folder are its own: nothing is root-owned at run time.
RUN chown deno:deno /app
USER deno

# Dependencies first, in a layer of their own, so code changes do not re-download them.
COPY --chown=deno:deno deno.json deno.lock ./
RUN deno install --frozen

COPY --chown=deno:deno . .
RUN deno cache --frozen main.ts && mkdir -p /app/.data

ENV PORT=8000 HOST=0.0.0.0
EXPOSE 8000
# Embedded Postgres and the KV file live here when DATABASE_URL / KV_PATH point nowhere else.
VOLUME ["/app/.data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s \
  CMD ["deno", "eval", "const r = await fetch('http://127.0.0.1:' + (Deno.env.get('PORT') ?? '8000') + '/healthz'); Deno.exit(r.ok ? 0 : 1)"]
# docker stop sends SIGTERM: the service stops accepting, drains requests and jobs (SHUTDOWN_TIMEOUT_MS,
# 10 s), then exits. Give `docker stop -t` at least that long.
STOPSIGNAL SIGTERM
# The V8 flag is the start task's (deno.json): see docs/deployment.md, "Memory".
CMD ["deno", "run", "-A", "--frozen", "--v8-flags=--heap-growing-percent=50", "main.ts"]
