# One image for all programs: keelson operator | ha-node | exporter | pooler | admin | ctl.
# The database pod runs ha-node (which starts PostgreSQL) and exporter from this same image.

FROM node:24.21.0-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY bin ./bin
COPY api ./api
COPY lib ./lib
COPY operator ./operator
COPY sidecar ./sidecar
COPY ctl ./ctl
COPY admin ./admin
COPY local ./local
RUN npx tsc -p tsconfig.json && npm prune --omit=dev

FROM node:24.21.0-bookworm-slim AS runtime
# PostgreSQL 15 server binaries: ha-node runs them in the database pod; pgBackRest archives WAL and takes
# backups there (openssl issues its TLS server certificates); PgBouncer: `keelson pooler` runs it in the pooler pods.
RUN apt-get update \
 && apt-get install -y --no-install-recommends postgresql-15 postgresql-contrib-15 pgbackrest pgbouncer ca-certificates openssl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 26 keelson \
 && useradd --system --uid 26 --gid 26 --home-dir /var/lib/keelson --create-home keelson
ENV PATH="/usr/lib/postgresql/15/bin:${PATH}" NODE_ENV=production
WORKDIR /opt/keelson
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
RUN ln -s /opt/keelson/dist/bin/keelson.js /usr/local/bin/keelson && chmod +x dist/bin/keelson.js
USER 26:26
EXPOSE 5432 8008 8010 9630 8080
ENTRYPOINT ["keelson"]
