# KnowHub: one image for `knowhub up` (the embedded stack) and for each
# `knowhub serve <service>`, `serve front`, `serve gateway` and `knowhub mcp` of
# docker-compose.yml.

# Builder: wheels of KnowHub, its SDK (clients/python) and every dependency.
FROM python:3.11.11-slim-bookworm AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY knowhub_server ./knowhub_server
COPY clients/python ./clients/python
RUN pip wheel --wheel-dir /wheels .

# Runtime: the wheels installed offline, a non-root user, data under /data.
FROM python:3.11.11-slim-bookworm
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PYTHONUNBUFFERED=1 \
    KNOWHUB_DATA_DIR=/data KNOWHUB_HOST=0.0.0.0 KNOWHUB_PORT=50051
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-index --find-links /wheels knowhub
RUN groupadd --system --gid 10001 knowhub \
    && useradd --system --uid 10001 --gid knowhub --home-dir /data --no-create-home knowhub \
    && mkdir /data && chown knowhub:knowhub /data
USER knowhub
WORKDIR /data
VOLUME ["/data"]
EXPOSE 50051 8080 8931
ENTRYPOINT ["knowhub"]
CMD ["up"]
