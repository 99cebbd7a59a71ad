# KnowHub: one image for each `knowhub serve <service>`, `serve gateway` and `knowhub mcp`
# of docker-compose.yml, for linux/amd64 and linux/arm64. It has no embedded Redis (the
# stack runs Redis as a service), so `knowhub up` in it needs KNOWHUB_REDIS_URL.

# Builder: wheels of KnowHub, its SDK (clients/python), its contracts (protos) and every
# dependency. The three local wheels are named to the second pip as files, so their pins
# resolve to them, never to an index. Only released wheels: no dependency is compiled (this
# image has no compiler), so a platform without a wheel fails here, naming the package.
# scripts/image_wheels.sh fetches the same set for both platforms without Docker.
FROM python:3.11.11-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY knowhub_server ./knowhub_server
COPY clients/python ./clients/python
COPY protos ./protos
RUN pip wheel --no-deps --wheel-dir /wheels . ./clients/python ./protos \
    && pip wheel --only-binary=:all: --wheel-dir /wheels /wheels/knowhub*.whl

# Runtime: the wheels installed offline, a non-root user. No volume: the services that keep
# state mount one where it lives (docker-compose.yml); the others keep nothing.
FROM python:3.11.11-slim-bookworm
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 \
    KNOWHUB_DATA_DIR=/data KNOWHUB_HOST=0.0.0.0 KNOWHUB_PORT=50051
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels knowhub
RUN groupadd --system --gid 10001 knowhub \
    && useradd --system --uid 10001 --gid knowhub --home-dir /data --no-create-home knowhub \
    && mkdir /data && chown knowhub:knowhub /data && chmod 700 /data
USER knowhub
WORKDIR /data
EXPOSE 50051 8080 8931
ENTRYPOINT ["knowhub"]
CMD ["--help"]
