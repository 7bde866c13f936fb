# The whole service in one process (API, OTP and worker roles), as on Deno Deploy.
FROM denoland/deno:2.5.6

WORKDIR /app

# Dependencies first, in a layer of their own, so code changes do not re-download them.
COPY deno.json deno.lock ./
RUN deno install --frozen

COPY . .
RUN deno cache main.ts && mkdir -p /app/.data && chown -R deno:deno /app

USER deno
ENV PORT=8000 HOST=0.0.0.0
EXPOSE 8000
CMD ["deno", "run", "-A", "main.ts"]
