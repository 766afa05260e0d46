# webcodex served over MCP's Streamable HTTP from a container: Debian's
# Chromium, a non-root user, the bearer token from the environment (a
# secret), one person's trust boundary per container.
#
#   docker build -t webcodex .
#   head -c 32 /dev/urandom | base64 > token && chmod 600 token
#   docker run --rm -p 127.0.0.1:8931:8931 -e WEBCODEX_MCP_TOKEN="$(cat token)" webcodex
#
# Chromium's sandbox and the network namespace of an owned browser need
# user namespaces, which Docker's default seccomp profile refuses: there
# webcodex runs Chromium with --no-sandbox and says so on stderr (and in
# `webcodex doctor`). Where the runtime allows them (a seccomp profile
# that permits unshare/clone of user namespaces, e.g. Chrome's own, or
# Podman rootless), the sandbox is on.

FROM golang:1.26-trixie AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/webcodex ./cmd/webcodex

FROM debian:trixie-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 --shell /usr/sbin/nologin webcodex \
 && install -d -m 0700 -o webcodex -g webcodex /home/webcodex/.local /home/webcodex/.local/state /home/webcodex/.local/state/webcodex
COPY --from=build /out/webcodex /usr/local/bin/webcodex
USER webcodex
WORKDIR /home/webcodex
ENV WEBCODEX_STATE_DIR=/home/webcodex/.local/state/webcodex WEBCODEX_CHROME=/usr/bin/chromium
EXPOSE 8931
# 0.0.0.0 inside the container is what a published port reaches; publish
# it on the host's loopback (-p 127.0.0.1:8931:8931) unless TLS is in front.
ENTRYPOINT ["webcodex", "mcp", "--http", "0.0.0.0:8931", "--http-remote"]
