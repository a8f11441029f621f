# syntax=docker/dockerfile:1
#
# MiniKV as a static binary on distroless, running as the image's nonroot user
# (uid/gid 65532). No shell, no package manager, nothing to exec into.
#
#   docker build -t minikv .
#   printf '%s' "$(openssl rand -hex 32)" > token
#   docker run --rm -p 11211:11211 -p 6379:6379 -p 127.0.0.1:9150:9150 \
#     -v "$PWD/token:/run/secrets/minikv_token:ro" \
#     -e MINIKV_AUTH_TOKEN_FILE=/run/secrets/minikv_token minikv --memory-limit 256
#
# Listening: inside a container MiniKV has to listen on 0.0.0.0 (MINIKV_LISTEN
# below), and MiniKV refuses a non-loopback address unless clients must
# authenticate. Give it a token with --auth-token-file / MINIKV_AUTH_TOKEN_FILE
# (a mounted secret, never a plain -e value that shows up in `docker inspect`),
# or, on a private network you trust, opt out explicitly with
# MINIKV_INSECURE_ALLOW_REMOTE=1 (or --insecure-allow-remote).
#
# Admin port 9150 (/healthz, /doctor, /metrics) has no authentication: publish
# it only to the orchestrator and the monitoring network. There is no shell for
# a HEALTHCHECK; probe GET /healthz over HTTP from the orchestrator instead
# (deploy/kubernetes.yaml). /debug/pprof is off unless --pprof is given.
#
# Stop: SIGTERM drains connections for --shutdown-timeout (default 10s); give
# `docker stop -t` / the orchestrator's grace period more than that.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY cmd ./cmd
COPY internal ./internal
COPY lsm ./lsm
ARG COMMIT=unknown
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w -X main.commit=${COMMIT}" -o /out/minikv ./cmd/minikv && \
    CGO_ENABLED=0 GOOS=linux go build -trimpath -ldflags "-s -w" -o /out/minikv-bench ./cmd/minikv-bench

# The load generator, for deploy/compose.yaml's bench service.
FROM gcr.io/distroless/static-debian12:nonroot AS bench
COPY --from=build /out/minikv-bench /minikv-bench
ENTRYPOINT ["/minikv-bench"]

# The server: the default (last) stage.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/minikv /minikv
ENV MINIKV_LISTEN=0.0.0.0 \
    MINIKV_ADMIN_ADDR=0.0.0.0:9150
EXPOSE 11211 6379 9150
USER nonroot:nonroot
ENTRYPOINT ["/minikv"]
