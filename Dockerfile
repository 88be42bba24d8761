# Encounter Data Service: production image (multi-stage, non-root, NODE_ENV=production).
# Build:  docker build -t eds .
# Run:    docker run -e EDS_DATABASE_URL=postgres://… -e EDS_KEY_DIGEST_SECRET_FILE=/run/secrets/digest \
#                    -e EDS_MEDIA_SIGNING_SECRET_FILE=/run/secrets/media -p 8080:8080 -p 8081:8081 eds serve
FROM node:24-bookworm-slim AS build
WORKDIR /app
# npm runs better-sqlite3's node-gyp step: it finds the package's prebuilt Node-API binary and
# builds nothing, but gyp needs python3 and make (and g++ where no prebuilt binary fits). The
# image's own headers serve node-gyp, so it downloads none.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local
COPY package.json package-lock.json .npmrc ./
COPY packages/server/package.json packages/server/
# The SDK workspace builds itself on install (its `prepare`), so its sources come first.
COPY packages/sdk packages/sdk
RUN npm ci --no-fund --no-audit
# The changelog is served as a guide at /docs/guides/changelog.
COPY tsconfig.base.json CHANGELOG.md ./
COPY packages/server packages/server
RUN npm run build -w packages/server && npm prune --omit=dev --no-fund --no-audit

FROM node:24-bookworm-slim
# Two malloc arenas instead of up to eight per CPU: the threads' arenas held about 7 MB more
# under load, for no measurable change in CPU per answer (docs/benchmarks.md, "Memory").
ENV NODE_ENV=production \
    EDS_HOST=0.0.0.0 \
    EDS_DATA_DIR=/var/lib/eds \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=build --chown=root:root /app /app
RUN mkdir -p /var/lib/eds && chown node:node /var/lib/eds
USER node
EXPOSE 8080 8081 9090
HEALTHCHECK --interval=10s --timeout=3s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.EDS_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# Peak memory under load (docs/benchmarks.md, Memory): 8 MB semi-spaces instead of V8's 16 MB,
# and Maglev's finished compilation jobs freed at once instead of queued for a background thread,
# which a busy machine seldom runs. The second flag is not accepted in NODE_OPTIONS.
ENTRYPOINT ["node", "--max-semi-space-size=8", "--no-maglev-destroy-on-background", "packages/server/dist/cli/main.js"]
CMD ["serve"]
