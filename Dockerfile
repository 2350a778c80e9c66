# localgate as a container: `npm run image` builds it, docs/container.md says how to run it.
# The base is any Debian bookworm with Node 20 and npm under /usr/local, as the official image has them.
ARG BASE=node:20-bookworm-slim

FROM ${BASE} AS build
# better-sqlite3 compiles here against the base's own Node headers: no prebuilt binary or header download.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 make g++ \
    && rm -rf /var/lib/apt/lists/*
ENV npm_config_nodedir=/usr/local \
    npm_config_build_from_source=true \
    npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
WORKDIR /src
COPY package.json package-lock.json ./
# A registry behind a private certificate authority: its CA comes in as the build secret npm_ca, never into a layer.
RUN --mount=type=secret,id=npm_ca,required=false \
    if [ -f /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
    && npm ci --ignore-scripts \
    && npm rebuild better-sqlite3
COPY tsconfig.json tsconfig.build.json ./
COPY lib lib
RUN npm run build \
    && npm prune --omit=dev --ignore-scripts \
    && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
        node_modules/better-sqlite3/build/Release/obj.target node_modules/better-sqlite3/build/Release/.deps \
        node_modules/better-sqlite3/build/Release/test_extension.node

FROM ${BASE}
# The service user owns only the data directories; the code stays root's and read-only to it.
RUN groupadd --gid 10001 localgate \
    && useradd --uid 10001 --gid localgate --home-dir /data --no-create-home --shell /usr/sbin/nologin localgate \
    && mkdir -p /data /app/data \
    && chown localgate:localgate /data /app/data
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY bin bin
COPY console console
COPY migrations migrations
COPY data/demo data/demo
# The built-in scenarios (localgate trigger) and the examples the console presents; a user's own go in /data/scenarios.
COPY data/scenarios data/scenarios
COPY examples/scenarios examples/scenarios
RUN ln -s /app/bin/localgate.js /usr/local/bin/localgate
# Every setting is the environment `npm start` reads; these differ from a laptop's defaults. In memory
# (DATA_DIR=:memory:) the generated token secret is kept in /app/data, inside the container.
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
USER localgate
VOLUME /data
EXPOSE 3000
# node itself asks /health: the image carries no curl or wget.
HEALTHCHECK --interval=5s --timeout=3s --start-period=5s --retries=3 \
    CMD ["node", "-e", "require('node:http').get({ host: '127.0.0.1', port: process.env.PORT, path: '/health', timeout: 2500 }, (res) => process.exit(res.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1)).on('timeout', () => process.exit(1))"]
# node is PID 1 and handles SIGTERM itself: it stops listening, finishes requests and closes the databases.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "/app/bin/localgate.js"]
CMD ["start"]
