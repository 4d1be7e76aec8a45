# ourobot: one image for `serve`, `worker` and `beat` (compose.yaml runs all three from it).
# Small and non-root: the package and its runtime dependencies in a virtualenv, no compilers,
# no dev tools, no source tree. git is what ourobot runs; bubblewrap is the cage every run of
# repository code goes through (it needs user namespaces and its own /proc, which Docker's
# default seccomp and AppArmor profiles refuse: compose.yaml's worker lifts them; see
# docs/deployment.md, "The sandbox in Docker").
FROM python:3.12-slim AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
RUN python -m venv /opt/ourobot
COPY pyproject.toml README.md LICENSE /src/
COPY app /src/app
COPY tasks /src/tasks
COPY reviewers /src/reviewers
COPY prompts /src/prompts
RUN /opt/ourobot/bin/pip install "/src[postgres]"

FROM python:3.12-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends git bubblewrap \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --user-group --home-dir /var/lib/ourobot --create-home ourobot
COPY --from=build /opt/ourobot /opt/ourobot
ENV PATH=/opt/ourobot/bin:$PATH \
    OUROBOT_DATA_DIR=/var/lib/ourobot \
    PYTHONUNBUFFERED=1
USER ourobot
WORKDIR /var/lib/ourobot
VOLUME /var/lib/ourobot
EXPOSE 3000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s \
    CMD ["python", "-c", "import urllib.request as u; u.urlopen('http://127.0.0.1:3000/healthz', timeout=4)"]
CMD ["ourobot", "serve", "--host", "0.0.0.0", "--port", "3000"]
